#include "cli_predict.h"

#include <cstdio>
#include <filesystem>

#include "cli_progress.h"
#include "cli_settings.h"
#include "studio/box_predict.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/mask_predict.h"
#include "studio/rate_text.h"

namespace studio {

PredictCommand::PredictCommand(CLI::App& app) {
  m_cmd = app.add_subcommand("predict", "What a trained run or an export says about new images or table rows");
  m_cmd->add_option("run_dir", m_folder, "The run folder, or an export folder")->required();
  m_cmd
      ->add_option("--input", m_input,
                   "An image file, a folder of images (class folders give the accuracy), or a "
                   "CSV table with the run's feature columns")
      ->required();
  cli::addChoiceOption(m_cmd, "--which", m_options.which,
                       "auto (default): the weights of the run's test figures (summary.json's test_weights); best, "
                       "last, or ema: the weights' moving average");
  m_topK = m_cmd->add_option("--top-k", m_options.topK, "Classes to list per input, most probable first (default 5)");
  m_tta = cli::addChoiceOption(m_cmd, "--tta", m_options.tta,
                               "Test-time augmentation: none (default); flip: the mean of the "
                               "image's and its mirror's probabilities; five-crop: of the four corners' "
                               "and the centre's crops of the image resized to 8/7 of the input (images "
                               "larger than the input)");
  m_cmd->add_option("--batch-size", m_options.batchSize, "Inputs per batch on the device (default 256)");
  m_cmd->add_option("--workers", m_options.workers, "Decoding threads (default: one per core)");
  m_cmd->add_option("--device", m_options.device, "auto (default: the first GPU, else the CPU), cpu, cuda or cuda:N");
  m_cmd
      ->add_option("--on-bad-file", m_onBad,
                   "fail (default), or skip: a file or row that cannot be read gets its "
                   "reason in the error column and the others are predicted")
      ->check(CLI::IsMember({"fail", "skip"}));
  m_outOption = m_cmd->add_option("--out", m_out,
                                  "The predictions' CSV file (default predictions.csv); a detector's: COCO's results "
                                  "JSON (default detections.json), or a CSV of one row per box (a .csv name); a "
                                  "segmenter's: the folder of its index PNG masks (default masks)");
  m_cmd->add_option("--annotations", m_annotations,
                    "A detector's run: the images' boxes (COCO JSON, YOLO data.yaml or a VOC folder); the images "
                    "they name under --input are predicted, with their COCO ids, and COCO's figures printed; a "
                    "segmenter's run: the images' masks (a folder of PNG masks, a COCO JSON or a YOLO data.yaml, as "
                    "data.annotations), whose figures (mean IoU, ...) are printed");
  m_cmd->add_flag("--overwrite", m_overwrite, "Replace the --out file when it exists");
}

PredictionReport PredictCommand::predictShown(Predictor& predictor, const char* phase) {
  PhaseBar bar(phase);
  PredictionReport r = predictor.predict(m_input, m_annotations, bar.progress());
  bar.endLine();
  return r;
}

int PredictCommand::run() {
  if (m_options.workers < 0)
    throw InputError("--workers " + std::to_string(m_options.workers) +
                     ": give the decoding threads, 1 or more, or 0 for one per core");
  m_options.skipBad = m_onBad == "skip";
  if (isDetectionRun(m_folder)) return runBoxes();
  if (isSegmentationRun(m_folder)) return runMasks();
  checkOutputFile(m_out, "--out", m_overwrite, {m_input});
  if (const std::string ts = torchScriptFileOf(m_folder); !ts.empty())
    std::fprintf(stderr, "note: the model is TorchScript (%s): loading it runs the code in it\n", ts.c_str());
  Predictor predictor(m_folder, m_options);
  if (m_topK->count() && predictor.classes().empty())  // a regression's values, a multi-label model's every label
    std::fprintf(stderr,
                 "warning: --top-k has no effect: %s gives each target's value or each label's "
                 "probability, not classes\n",
                 predictor.description().c_str());
  const PredictionReport r = predictShown(predictor, "predicting");
  writePredictionsCsv(r, m_out);
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  const auto n = static_cast<long long>(r.rows.size());
  std::printf("predicted %lld %s with %s on %s in %.2f s (%s per second)\n", n - r.skipped,
              r.input == PredictInput::image ? "images" : "rows", r.model.c_str(), r.device.c_str(), r.seconds,
              rateText(r.seconds > 0 ? static_cast<double>(n) / r.seconds : 0.0).c_str());
  for (const auto& row : r.rows)
    if (!row.error.empty()) std::fprintf(stderr, "skipped %s: %s\n", row.source.c_str(), row.error.c_str());
  if (r.skipped > 0)
    std::printf("skipped %lld (each one's reason is in the error column of %s)\n", static_cast<long long>(r.skipped),
                m_out.c_str());
  if (r.labelled > 0) {
    std::printf("accuracy %.4f (%lld of %lld labelled inputs)\n", r.accuracy(), static_cast<long long>(r.correct),
                static_cast<long long>(r.labelled));
    std::printf("confusion matrix (rows: true class, columns: predicted, in the order of the classes):\n");
    for (size_t i = 0; i < r.confusion.size(); ++i) {
      std::printf("  %-16s", r.classes[i].c_str());
      for (const auto v : r.confusion[i]) std::printf(" %6lld", static_cast<long long>(v));
      std::printf("\n");
    }
  }
  std::printf("wrote %s\n", m_out.c_str());
  return 0;
}

}  // namespace studio
