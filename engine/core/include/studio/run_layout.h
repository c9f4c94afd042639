#pragma once
// A run folder's files and the keys of the JSON files in it, in one place:
// the engine writes them, the window and the CLI read them.
//   settings.json      the settings that ran, plus run_info (below)
//   metrics.csv        one row per step and evaluation (studio/metric_record.h)
//   log.txt            the engine's log
//   summary.json       the final figures (RunSummary)
//   classes.json       class names and per-class counts of each split
//   splits.csv         the validation and test splits' examples (split,
//                      source; a detector's also image_id), so that their
//                      figures can be computed again outside the studio
//   eval/step-<N>.json each evaluation: confusion matrix, per-class figures,
//                      the most confidently wrong examples (studio/eval_report.h)
//   eval/step-<N>-wrong.png  their thumbnails, side by side (image data)
//   checkpoints/last.ckpt, checkpoints/best.ckpt, checkpoints/step-<N>.ckpt
//                      (output.keep_checkpoints)
// Torch-free. Thread: constants and pure functions.

#include <cstdint>
#include <ctime>
#include <string>

#include "studio/choice.h"

namespace studio {
// Which weights of a run export and predict use: auto (those of the run's
// test figures, summary.json's test_weights), the best or the last
// checkpoint's, or ema (the last one's moving average, train.ema).
STUDIO_CHOICE(WeightsChoice, auto_, best, last, ema)
}  // namespace studio

namespace studio::run_files {

// The local date and time that begins a run folder's name (and a study's
// default name): "20261125-231911".
inline std::string folderStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return stamp;
}

inline constexpr const char* kSettings = "settings.json";
inline constexpr const char* kMetrics = "metrics.csv";
inline constexpr const char* kLog = "log.txt";
inline constexpr const char* kSummary = "summary.json";
inline constexpr const char* kClasses = "classes.json";
inline constexpr const char* kSplits = "splits.csv";
// task.tune_thresholds: {"step", "thresholds": {label: threshold}}, from the
// last validation evaluation; predict and export use them.
inline constexpr const char* kThresholds = "thresholds.json";
inline constexpr const char* kEvalFolder = "eval";
inline constexpr const char* kCheckpoints = "checkpoints";
inline constexpr const char* kLastCheckpoint = "checkpoints/last.ckpt";
inline constexpr const char* kBestCheckpoint = "checkpoints/best.ckpt";

// An export folder (training-studio-cli export) beside the run's files:
// preprocessing.json (how to feed the model; kExportFormat is what predict
// reads), checkpoint.ckpt (the weights exported), model.ts (TorchScript).
inline constexpr const char* kPreprocessing = "preprocessing.json";
inline constexpr const char* kExportedCheckpoint = "checkpoint.ckpt";
inline constexpr const char* kExportedTorchScript = "model.ts";
// An image model's export: image files to its input, as the studio made it.
inline constexpr const char* kPreprocessScript = "preprocess.py";
inline constexpr int kExportFormat = 1;

inline std::string evalReport(int64_t step) {
  return std::string(kEvalFolder) + "/step-" + std::to_string(step) + ".json";
}
inline std::string stepCheckpoint(int64_t step) { return "checkpoints/step-" + std::to_string(step) + ".ckpt"; }
inline std::string evalThumbnails(int64_t step) {
  return std::string(kEvalFolder) + "/step-" + std::to_string(step) + "-wrong.png";
}

// Keys of settings.json's run_info.
namespace run_info {
inline constexpr const char* kKey = "run_info";
inline constexpr const char* kLibtorch = "libtorch_version";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kTrainExamples = "train_examples";
inline constexpr const char* kTotalSteps = "total_steps";
inline constexpr const char* kNormalization = "normalization";  // {"mean": [...], "std": [...]}
inline constexpr const char* kInput = "input";                  // {"channels","height","width","features"}
inline constexpr const char* kClasses = "classes";              // [names]
inline constexpr const char* kFeatures = "features";            // tables: [names]
// task.kind detection: [{"id", "name"}] of the annotations' categories, in
// the order of classes (a detector's label k + 1 is categories[k]): the ids
// predictions and exports speak.
inline constexpr const char* kCategories = "categories";
// A regression: {"names": [target columns], "mean": [...], "std": [...]},
// the statistics its targets were standardised with (task.standardize_targets);
// a multi-label run: {"names": [labels], "positives": [training examples
// of each], "threshold", "pos_weight": [...] (loss.pos_weight)}.
inline constexpr const char* kTargets = "targets";
// loss.class_weights other than none: the weight of each class, as used.
inline constexpr const char* kClassWeights = "class_weights";
// A torchvision backbone started from model.weights: {"path", "sha256",
// "tensors" loaded, "head" ("fc"), "head_kept", "file_classes",
// "prefix_removed" ("module." for a DataParallel state dict, else "")}.
inline constexpr const char* kPretrained = "pretrained";
// train.finetune: {"groups": [{"name", "lr_factor", "trains_from_epoch"
// (1-based)}], "freeze_batchnorm"}.
inline constexpr const char* kFinetune = "finetune";
inline constexpr const char* kModel = "model";               // "cnn w32 d2", "TorchScript net.ts"
inline constexpr const char* kModelSha256 = "model_sha256";  // TorchScript files
inline constexpr const char* kLrChanges = "lr_changes";
inline constexpr const char* kData = "data";             // what the data settings selected
inline constexpr const char* kWorldSize = "world_size";  // processes under torchrun (absent: 1)
inline constexpr const char* kRunId = "run_id";          // 16 hex digits, also in each checkpoint
inline constexpr const char* kProbe = "probe";           // "lr-find" | "batch-find": not a training run
// A fork: {"run": the parent's folder, "checkpoint": best|last|step-N,
// "step", "epoch", "changed": {"key": [parent's value, this run's]},
// "step_shift": steps a changed batch size moves the plan by}.
inline constexpr const char* kParent = "parent";
// Continuations: [{"from_step", "to_step", "schedule": restart|constant,
// "lr", "settings": the restarted schedule's settings}].
inline constexpr const char* kContinued = "continued";
}  // namespace run_info

}  // namespace studio::run_files
