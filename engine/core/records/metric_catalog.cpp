#include "studio/metric_catalog.h"

#include <utility>

#include "studio/errors.h"

namespace studio {
namespace {

using C = MetricPlot;
using K = RecordKind;

MetricSpec real(const char* id, const char* label, const char* unit, K kind, C chart, double MetricRecord::*field,
                int colour = 0) {
  MetricSpec s{id, label, unit, kind, chart};
  s.real = field;
  s.colour = colour;
  return s;
}

constexpr unsigned kClassification = taskBit(TaskKind::classification), kRegression = taskBit(TaskKind::regression),
                   kMultilabel = taskBit(TaskKind::multilabel), kDetection = taskBit(TaskKind::detection),
                   kSegmentation = taskBit(TaskKind::segmentation),
                   kInstances = taskBit(TaskKind::instance_segmentation);

// An evaluation figure: which way is better, which tasks record it.
void judge(MetricSpec& m, Better better, unsigned tasks, const char* figureOf) {
  m.better = better;
  m.tasks = tasks;
  m.figureOf = figureOf;
}

std::vector<MetricSpec> make() {
  std::vector<MetricSpec> m;
  m.push_back(real("wall_s", "wall time", "s", K::Train, C::None, &MetricRecord::wallSeconds));
  MetricSpec trainLoss =
      real("train_loss", "train (raw)", "cross-entropy", K::Train, C::Loss, &MetricRecord::trainLoss);
  judge(trainLoss, Better::Lower, kEveryTask, "training");
  m.push_back(trainLoss);
  m.push_back(real("lr", "actual", "lr", K::Train, C::LearningRate, &MetricRecord::lr));
  m.push_back(real("grad_norm", "gradient norm", "L2 norm", K::Train, C::GradNorm, &MetricRecord::gradNorm));
  m.push_back(real("loss_scale", "loss scale", "scale", K::Train, C::LossScale, &MetricRecord::lossScale));
  MetricSpec skipped{"skipped_steps", "skipped steps", "steps", K::Train, C::LossScale};
  skipped.whole = &MetricRecord::skippedSteps;
  skipped.colour = 1;
  skipped.dashed = true;
  skipped.rightAxis = true;
  m.push_back(skipped);
  m.push_back(
      real("samples_per_s", "samples/s", "samples/s", K::Train, C::Throughput, &MetricRecord::samplesPerSecond));
  m.push_back(real("step_ms", "step time", "ms", K::Train, C::None, &MetricRecord::stepMillis));
  m.push_back(real("mem_allocated_mib", "allocated", "MiB", K::Train, C::Memory, &MetricRecord::memAllocatedMiB, 0));
  m.push_back(real("mem_reserved_mib", "reserved", "MiB", K::Train, C::Memory, &MetricRecord::memReservedMiB, 1));
  m.push_back(real("mem_peak_mib", "peak allocated", "MiB", K::Train, C::Memory, &MetricRecord::memPeakMiB, 3));
  MetricSpec micro{"micro_batch", "micro-batch", "examples", K::Train, C::None};
  micro.whole = &MetricRecord::microBatch;
  m.push_back(micro);
  MetricSpec evalLoss = real("eval_loss", "eval", "cross-entropy", K::Eval, C::Loss, &MetricRecord::evalLoss, 1);
  evalLoss.dashed = true;
  evalLoss.dots = true;
  // A detector's evaluation gives COCO's figures only (torchvision's
  // detectors give no loss in evaluation); a segmenter's, the loss per pixel.
  judge(evalLoss, Better::Lower, kClassification | kRegression | kMultilabel | kSegmentation,
        "classification, regression, multi-label or segmentation");
  m.push_back(evalLoss);
  MetricSpec evalAcc =
      real("eval_accuracy", "eval accuracy", "accuracy", K::Eval, C::Accuracy, &MetricRecord::evalAccuracy, 2);
  evalAcc.dots = true;
  judge(evalAcc, Better::Higher, kClassification | kMultilabel, "classification");
  m.push_back(evalAcc);
  // train.ema: the moving average's evaluation, beside the raw weights'.
  MetricSpec emaLoss =
      real("ema_eval_loss", "eval (EMA)", "cross-entropy", K::Eval, C::Loss, &MetricRecord::emaEvalLoss, 3);
  emaLoss.dashed = true;
  emaLoss.dots = true;
  judge(emaLoss, Better::Lower, kClassification | kRegression | kMultilabel,
        "classification, regression or multi-label");
  m.push_back(emaLoss);
  MetricSpec emaAcc = real("ema_eval_accuracy", "eval accuracy (EMA)", "accuracy", K::Eval, C::Accuracy,
                           &MetricRecord::emaEvalAccuracy, 3);
  emaAcc.dots = true;
  judge(emaAcc, Better::Higher, kClassification | kMultilabel, "classification");
  m.push_back(emaAcc);
  // task.kind regression: R² beside accuracy (higher is better, at most 1);
  // the errors in the data's units, in metrics.csv and the Evaluation tab.
  MetricSpec r2 = real("eval_r2", "eval R\u00b2", "R\u00b2", K::Eval, C::Accuracy, &MetricRecord::evalR2, 2);
  r2.dots = true;
  judge(r2, Better::Higher, kRegression, "regression");
  m.push_back(r2);
  MetricSpec rmse = real("eval_rmse", "eval RMSE", "target units", K::Eval, C::None, &MetricRecord::evalRmse);
  judge(rmse, Better::Lower, kRegression, "regression");
  m.push_back(rmse);
  MetricSpec mae = real("eval_mae", "eval MAE", "target units", K::Eval, C::None, &MetricRecord::evalMae);
  judge(mae, Better::Lower, kRegression, "regression");
  m.push_back(mae);
  // task.kind multilabel: mAP and macro F1 beside accuracy (the subset's);
  // task.kind detection: COCO's mAP@[.50:.95] and AP50.
  MetricSpec map = real("eval_map", "eval mAP", "mAP", K::Eval, C::Accuracy, &MetricRecord::evalMap, 4);
  map.dots = true;
  judge(map, Better::Higher, kMultilabel | kDetection | kInstances, "multi-label or detection");
  m.push_back(map);
  MetricSpec map50 = real("eval_map50", "eval AP50", "mAP", K::Eval, C::Accuracy, &MetricRecord::evalMap50, 5);
  map50.dots = true;
  judge(map50, Better::Higher, kDetection | kInstances, "detection");
  m.push_back(map50);
  MetricSpec f1 = real("eval_f1", "eval F1 (macro)", "F1", K::Eval, C::Accuracy, &MetricRecord::evalF1, 5);
  f1.dots = true;
  f1.dashed = true;
  judge(f1, Better::Higher, kMultilabel, "multi-label");
  m.push_back(f1);
  // Classification: in metrics.csv, TensorBoard and the Evaluation tab.
  MetricSpec auc = real("eval_auc", "eval ROC AUC (mean of classes)", "AUC", K::Eval, C::None, &MetricRecord::evalAuc);
  judge(auc, Better::Higher, kClassification, "single-label classification");
  m.push_back(auc);
  MetricSpec ece = real("eval_ece", "eval calibration error", "ECE", K::Eval, C::None, &MetricRecord::evalEce);
  judge(ece, Better::Lower, kClassification, "single-label classification");
  m.push_back(ece);
  // task.kind segmentation: torchvision's references' figures of the
  // confusion matrix (mean IoU, pixel accuracy) and the classes' mean Dice.
  MetricSpec miou = real("eval_miou", "eval mean IoU", "IoU", K::Eval, C::Accuracy, &MetricRecord::evalMiou, 4);
  miou.dots = true;
  judge(miou, Better::Higher, kSegmentation, "segmentation");
  m.push_back(miou);
  MetricSpec pixels = real("eval_pixel_accuracy", "eval pixel accuracy", "accuracy", K::Eval, C::Accuracy,
                           &MetricRecord::evalPixelAccuracy, 2);
  pixels.dots = true;
  judge(pixels, Better::Higher, kSegmentation, "segmentation");
  m.push_back(pixels);
  MetricSpec dice = real("eval_dice", "eval Dice (mean of classes)", "Dice", K::Eval, C::None, &MetricRecord::evalDice);
  judge(dice, Better::Higher, kSegmentation, "segmentation");
  m.push_back(dice);
  // task.kind instance_segmentation: COCO's segm figures (the masks'),
  // beside the boxes' eval_map and eval_map50.
  MetricSpec maskMap =
      real("eval_mask_map", "eval mask mAP", "mAP", K::Eval, C::Accuracy, &MetricRecord::evalMaskMap, 0);
  maskMap.dots = true;
  judge(maskMap, Better::Higher, kInstances, "per-instance mask");
  m.push_back(maskMap);
  MetricSpec maskMap50 =
      real("eval_mask_map50", "eval mask AP50", "mAP", K::Eval, C::Accuracy, &MetricRecord::evalMaskMap50, 1);
  maskMap50.dots = true;
  judge(maskMap50, Better::Higher, kInstances, "per-instance mask");
  m.push_back(maskMap50);
  // task.kind detection: the parts of a detector's loss (Faster R-CNN's
  // four, RetinaNet's two), each its own curve beside their sum (train_loss), dashed.
  // A detector has one of the two sets: each set's colours start at the same place.
  struct Part {
    const char* id;
    double MetricRecord::*field;
    int colour;
  };
  for (const Part& p :
       {Part{"loss_classifier", &MetricRecord::lossClassifier, 2}, Part{"loss_box_reg", &MetricRecord::lossBoxReg, 3},
        Part{"loss_objectness", &MetricRecord::lossObjectness, 4},
        Part{"loss_rpn_box_reg", &MetricRecord::lossRpnBoxReg, 5}, Part{"loss_mask", &MetricRecord::lossMask, 6},
        Part{"classification", &MetricRecord::lossClassification, 2},
        Part{"bbox_regression", &MetricRecord::lossBboxRegression, 3}}) {
    MetricSpec part = real(p.id, p.id, "loss", K::Train, C::Loss, p.field, p.colour);
    part.dashed = true;
    m.push_back(part);
  }
  return m;
}

}  // namespace

const std::vector<MetricSpec>& metricCatalog() {
  static const std::vector<MetricSpec> catalog = make();
  return catalog;
}

const MetricSpec* findMetric(const std::string& id) {
  for (const auto& m : metricCatalog())
    if (id == m.id) return &m;
  return nullptr;
}

namespace {
// The evaluation figures some of `tasks` record, in catalog order.
std::vector<std::string> evalMetrics(unsigned tasks, bool ema) {
  std::vector<std::string> out;
  for (const auto& m : metricCatalog())
    if (m.kind == RecordKind::Eval && (m.tasks & tasks) != 0 && (ema || std::string(m.id).rfind("ema_", 0) != 0))
      out.emplace_back(m.id);
  return out;
}
}  // namespace

std::vector<std::string> taskEvalMetrics(TaskKind task, bool ema) { return evalMetrics(taskBit(task), ema); }

std::vector<std::string> evalFigures(bool ema) { return evalMetrics(kEveryTask, ema); }

bool lowerIsBetter(const std::string& metric) {
  const MetricSpec* m = findMetric(metric);
  if (!m || m->better == Better::None)
    throw InputError("metric " + metric + " is not an evaluation figure: give " + listText(evalFigures(true)));
  return m->better == Better::Lower;
}

std::string metricTaskProblem(const std::string& metric, const Choice<TaskKind>& task) {
  const MetricSpec* m = findMetric(metric);
  if (!m || m->kind != RecordKind::Eval || m->recordedBy(task.value())) return "";
  return metric + " is a " + m->figureOf + " figure; task.kind is " + task + ": use " +
         listText(taskEvalMetrics(task.value()));
}

bool isFigure(std::string_view id) {
  if (id == "eval_map75") return true;
  for (const auto& m : metricCatalog())
    if (m.kind == RecordKind::Eval && id == m.id) return true;
  return false;
}

const std::vector<std::string>& taskTestFigures(TaskKind task) {
  static const std::vector<std::string> classification{"eval_accuracy", "eval_loss"},
      regression{"eval_loss", "eval_r2", "eval_rmse", "eval_mae"},
      multilabel{"eval_accuracy", "eval_loss", "eval_map", "eval_f1"},
      detection{"eval_map", "eval_map50", "eval_map75"},
      segmentation{"eval_miou", "eval_pixel_accuracy", "eval_dice", "eval_loss"},
      instances{"eval_mask_map", "eval_mask_map50", "eval_map", "eval_map50"};
  switch (task) {
    case TaskKind::regression:
      return regression;
    case TaskKind::multilabel:
      return multilabel;
    case TaskKind::detection:
      return detection;
    case TaskKind::segmentation:
      return segmentation;
    case TaskKind::instance_segmentation:
      return instances;
    case TaskKind::classification:
      break;
  }
  return classification;
}

const char* taskScoreMetric(TaskKind task) {
  switch (task) {
    case TaskKind::regression:
      return "eval_r2";
    case TaskKind::multilabel:
    case TaskKind::detection:
      return "eval_map";
    case TaskKind::segmentation:
      return "eval_miou";
    case TaskKind::instance_segmentation:
      return "eval_mask_map";
    case TaskKind::classification:
      break;
  }
  return "eval_accuracy";
}

}  // namespace studio
