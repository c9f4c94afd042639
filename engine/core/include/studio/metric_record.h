#pragma once
// One fixed-size record of what happened at an optimizer step or evaluation.
// Plain data: the engine posts it through a lock-free queue, the recorder
// writes it as one row of metrics.csv. Torch-free.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace studio {

// NonFinite: a step whose loss or gradients were not finite (not applied);
// Rollback: the run went back to the checkpoint at `step`, with learning
// rate `lr` (rows after that step no longer stand); EarlyStop: the run ends
// at `step` (train.early_stopping: no improvement for its patience).
// OomBackoff: a step ran out of memory; the micro-batch is halved (microBatch
// holds the new one) and the step is made again.
// Unfreeze: train.finetune unfroze layer groups; steps after `step` train
// them too (lr: the head's learning rate then).
enum class RecordKind : uint8_t {
  Train = 0,
  Eval = 1,
  LrChange = 2,
  NonFinite = 3,
  Rollback = 4,
  EarlyStop = 5,
  OomBackoff = 6,
  Unfreeze = 7
};

struct MetricRecord {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  RecordKind kind = RecordKind::Train;
  int64_t step = 0;  // optimizer steps done when this was recorded
  int64_t epoch = 0;
  double wallSeconds = 0;    // since the run (first) started
  double trainLoss = kNone;  // mean loss of this step's samples
  double lr = kNone;
  double gradNorm = kNone;   // before clipping
  double lossScale = kNone;  // fp16 only
  int64_t skippedSteps = 0;  // total so far (fp16 steps skipped on inf/NaN)
  double samplesPerSecond = kNone;
  double stepMillis = kNone;
  double memAllocatedMiB = kNone;  // CUDA allocator; process RSS on the CPU
  double memReservedMiB = kNone;
  double memPeakMiB = kNone;
  int64_t microBatch = 0;  // examples per forward pass (memory.oom_backoff may lower it)
  // task.kind detection: the parts of a detector's loss (trainLoss is their
  // sum), torchvision's loss_dict, each the step's mean: Faster R-CNN's four,
  // or a single-stage detector's two (RetinaNet's classification and bbox_regression).
  double lossClassifier = kNone;
  double lossBoxReg = kNone;
  double lossObjectness = kNone;
  double lossRpnBoxReg = kNone;
  double lossClassification = kNone;
  double lossBboxRegression = kNone;
  double lossMask = kNone;  // Mask R-CNN's (task.kind instance_segmentation)
  double evalLoss = kNone;
  double evalAccuracy = kNone;
  double emaEvalLoss = kNone;  // the weights' moving average (train.ema)
  double emaEvalAccuracy = kNone;
  // task.kind regression, in the data's units (averaged over the targets).
  double evalR2 = kNone;
  double evalRmse = kNone;
  double evalMae = kNone;
  // task.kind multilabel: mean average precision, and F1 averaged over the
  // labels (evalAccuracy holds the subset accuracy). task.kind detection:
  // COCO's AP@[.50:.95] (evalMap) and AP at IoU 0.5 (evalMap50).
  double evalMap = kNone;
  double evalMap50 = kNone;
  double evalF1 = kNone;
  // Classification: the classes' mean one-vs-rest ROC AUC, and the expected
  // calibration error (studio/calibration.h).
  double evalAuc = kNone;
  double evalEce = kNone;
  // task.kind segmentation (studio/segmentation_figures.h): the mean of the
  // classes' IoU, the share of pixels right, the mean of the classes' Dice.
  double evalMiou = kNone;
  double evalPixelAccuracy = kNone;
  double evalDice = kNone;
  // task.kind instance_segmentation: COCO's segm AP@[.50:.95] and AP50
  // (the masks'; evalMap and evalMap50 are the boxes').
  double evalMaskMap = kNone;
  double evalMaskMap50 = kNone;
};

// The metrics.csv header and one row, so every reader and writer agrees.
std::string metricsCsvHeader();
std::string metricsCsvRow(const MetricRecord& r);
// Parses a row written by metricsCsvRow; false if it is not one.
bool parseMetricsCsvRow(const std::string& line, MetricRecord& out);

// The columns of a metrics.csv as its header names them: a file written
// before a metric existed lacks its column (the metric reads as none), and a
// column this studio does not know is skipped. nullopt when the line is not
// a metrics.csv header (it must start with kind,step,epoch).
struct MetricsCsvColumns {
  std::vector<int> catalogIndex;  // per column after kind,step,epoch: the catalogue entry, or -1
};
std::optional<MetricsCsvColumns> metricsCsvColumns(const std::string& header);
bool parseMetricsCsvRow(const std::string& line, MetricRecord& out, const MetricsCsvColumns& columns);

}  // namespace studio
