#pragma once
// training-studio-cli predict RUN|EXPORT --input FILE|FOLDER|TABLE.csv [--which best|last|ema]
//   [--top-k 5] [--tta none|flip] [--batch-size N] [--workers N] [--device D] [--on-bad-file fail|skip]
//   [--out predictions.csv] [--overwrite]
// A detection run: [--annotations FILE] [--out detections.json|boxes.csv]
//   (cli_predict_boxes.cpp). A segmentation run: [--annotations MASKS]
//   [--out FOLDER] (cli_predict_masks.cpp).
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <string>

#include "studio/predict.h"

namespace studio {

class PredictCommand {
 public:
  explicit PredictCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  // Exit status: 0, or throws InputError / IoError for the caller's handler.
  int run();

 private:
  int runBoxes();  // a detector's boxes
  int runMasks();  // a segmenter's masks
  // The predictor's report on the inputs, its progress drawn as `phase`.
  PredictionReport predictShown(Predictor& predictor, const char* phase);
  CLI::App* m_cmd = nullptr;
  CLI::Option *m_topK = nullptr, *m_tta = nullptr, *m_outOption = nullptr;
  std::string m_folder, m_input, m_out = "predictions.csv", m_onBad = "fail", m_annotations;
  bool m_overwrite = false;
  PredictOptions m_options;
};

}  // namespace studio
