#pragma once
// training-studio-cli label --suggest RUN --data FOLDER [--out order.csv] [--strategy least-confidence|margin|entropy]
//   [--similarity 0.95] [--device D] [--overwrite]
// training-studio-cli label --prelabel RUN --data FOLDER [--out proposals.json] [--top-k 3] [--min-score 0.5]
// training-studio-cli label --export LABELS --data FOLDER --out NEW_FOLDER [--format folders|yolo|voc]
// The order to label a folder's images in by a trained classifier's or
// detector's uncertainty, near-copies last; the model's proposed labels for them
// (studio/label_suggest.h; issue 62, item 5); the Label tab's labels file
// as class folders, YOLO or Pascal VOC (studio/label_export.h).
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <string>

#include "studio/label_suggest.h"

namespace studio::cli {

class LabelCommand {
 public:
  explicit LabelCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  // Exit status: 0, or throws InputError for the caller's handler.
  int run();

 private:
  int suggest();
  int prelabel();
  int exportLabels();
  CLI::App* m_cmd = nullptr;
  std::string m_suggestRun, m_prelabelRun, m_exportLabels, m_format, m_data, m_out, m_strategy = "least-confidence";
  bool m_overwrite = false;
  SuggestOptions m_options;
  PrelabelOptions m_prelabel;
};

}  // namespace studio::cli
