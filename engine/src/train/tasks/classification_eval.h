#pragma once
// Classification's evaluation without autograd (InferenceMode): loss, accuracy, the confusion
// matrix and the most confidently wrong examples of a split. Everything is
// accumulated on the device and read back in one sync at the end.
// Thread: engine thread.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/batch_loader.h"
#include "data/dataset.h"
#include "models/model.h"
#include "studio/binary_curves.h"
#include "studio/eval_report.h"

namespace studio {

class ProcessGroup;

struct EvalOptions {
  int64_t batchSize = 1000;
  bool autocast = false;
  at::ScalarType autocastDtype = at::kFloat;
  bool channelsLast = false;
  int64_t classes = 0;
  int64_t wrongToKeep = 16;
  // A regression: the statistics its targets were standardised with, to
  // report figures in the data's units.
  std::vector<std::string> targetNames;  // a regression's targets, a multi-label's labels
  std::vector<double> targetMean, targetStd;
  // Multi-label: each label's threshold; tune: set them to this split's
  // best-F1 thresholds first (the validation split with task.tune_thresholds).
  std::vector<double> thresholds;
  bool tuneThresholds = false;
  // Data parallelism: each rank evaluates its contiguous share of the set
  // and the figures are summed over the ranks (every rank gets them all).
  ProcessGroup* group = nullptr;
  // Called after each batch is issued (batches done, batches in all): the
  // front-end's progress; never a sync with the device.
  std::function<void(int64_t, int64_t)> progress;
};

struct EvalOutcome {
  double loss = 0, accuracy = std::numeric_limits<double>::quiet_NaN();
  // A regression's figures (NaN for classification): see EvalReport.
  double rmse = std::numeric_limits<double>::quiet_NaN(), mae = rmse, r2 = rmse;
  std::vector<TargetFigures> targets;
  std::vector<std::vector<double>> actual, predicted;
  // A multi-label's (accuracy: the subset accuracy): see EvalReport.
  double map = std::numeric_limits<double>::quiet_NaN(), microF1 = map, macroF1 = map;
  std::vector<LabelFigures> labels;
  // A detector's COCO figures (accuracy NaN, map their AP@[.50:.95]): see EvalReport.
  std::vector<double> coco, apPerClass;
  std::vector<std::vector<double>> precision50;
  // An instance segmentation's masks' (COCOeval "segm"): see EvalReport.
  std::vector<double> maskCoco, maskApPerClass;
  // Classification: each class's one-vs-rest curves, the reliability
  // diagram, and their summaries (the classes' mean ROC AUC; the ECE).
  std::vector<BinaryCurves> classCurves;
  Reliability reliability;
  double rocAuc = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  // A segmentation's figures of its pixels' confusion (above; accuracy:
  // the pixel accuracy): see EvalReport.
  SegmentationFigures segmentation;
  struct Wrong {
    int64_t index, truth, predicted;
    double confidence;
  };
  std::vector<Wrong> wrong;  // most confident first
};

EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                     const torch::Device& device);

// Every task's evaluation loop: this rank's share of the set in batches,
// normalised, through the model in eval mode under InferenceMode (and
// autocast), the progress reported; fn gets each batch's outputs (float32),
// targets on the device and positions [start, end). Leaves the model in
// training mode.
// Every rank's rows of a per-example tensor, in the set's order: each
// rank's share (n * r / world .. n * (r + 1) / world) padded to the
// largest, gathered, the padding dropped.
torch::Tensor gatherRows(const torch::Tensor& mine, int64_t n, ProcessGroup& group);

// Examples x classes above which an evaluation keeps no probabilities for
// its curves (80 MB of float32).
inline constexpr int64_t kCurveValuesCap = 20'000'000;

// Rows of a different count on each rank (a detector's boxes), every
// rank's in rank order: the counts gathered, each rank's rows padded to the
// most, gathered, the padding dropped.
torch::Tensor gatherUnevenRows(const torch::Tensor& mine, ProcessGroup& group, const std::string& what);

// An evaluation's loop: this rank's share of the set (n * rank / world ..
// n * (rank + 1) / world; all of it without a group) in batches of
// options.batchSize, each on the device and transformed as evaluations
// transform, the model in evaluation mode, under inference mode, the
// progress reported. fn gets each batch's x and y.
using EvalSliceFn = std::function<void(const torch::Tensor& x, const torch::Tensor& y, int64_t start, int64_t end)>;
void forEachEvalSlice(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                      const torch::Device& device, const EvalSliceFn& fn);

// forEachEvalSlice with the model's float32 outputs (under autocast when on).
using EvalBatchFn =
    std::function<void(const torch::Tensor& output, const torch::Tensor& y, int64_t start, int64_t end)>;
void forEachEvalBatch(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                      const torch::Device& device, const EvalBatchFn& fn);

}  // namespace studio
