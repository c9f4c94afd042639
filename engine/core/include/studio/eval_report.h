#pragma once
// What one evaluation shows: loss and accuracy, the confusion matrix (rows:
// true class, columns: predicted), per-class precision, recall, F1 and
// one-vs-rest accuracy, and the examples the model got wrong with the most
// confidence. Written by the engine as eval/step-<N>.json and read by the
// window (live, and to compare runs). Torch-free.
// Thread: plain data and free functions, any thread.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "studio/calibration.h"
#include "studio/segmentation_figures.h"
#include "studio/train_config.h"

#include <nlohmann/json_fwd.hpp>

namespace studio {

struct ClassFigures {
  std::string name;
  int64_t support = 0;    // examples of this class
  int64_t predicted = 0;  // examples predicted as this class
  int64_t correct = 0;
  double precision = 0, recall = 0, f1 = 0, accuracy = 0;  // NaN when undefined (nothing predicted / no support)
  // One-vs-rest on the class's probability (NaN when not computed): its
  // average precision and ROC AUC, and the curves (studio/binary_curves.h).
  double averagePrecision = std::numeric_limits<double>::quiet_NaN();
  double rocAuc = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<double, double>> roc, pr;
};

struct WrongExample {
  int64_t index = 0;   // position in the evaluated split
  std::string source;  // the file, or "table.csv row 17", or "t10k image 312"
  int64_t truth = 0, predicted = 0;
  double confidence = 0;  // softmax probability of the predicted class
};

// A regression target's figures on a split, in the data's units (as
// scikit-learn's root_mean_squared_error, mean_absolute_error, r2_score).
struct TargetFigures {
  std::string name;
  double rmse = 0, mae = 0, r2 = 0;
  double mean = 0, std = 0;  // of the actual values (population std)
};

// A multi-label's label on a split: counts and figures at the threshold
// used, its ranking figures (average precision, ROC AUC), the threshold of
// its best F1 on this split, and its curves (see studio/binary_curves.h).
struct LabelFigures {
  std::string name;
  int64_t support = 0, predicted = 0, correct = 0;  // examples with it, predicted with it, both
  double precision = 0, recall = 0, f1 = 0;         // NaN precision/recall when undefined
  double averagePrecision = 0, rocAuc = 0;
  double threshold = 0.5, bestThreshold = 0.5, bestF1 = 0;
  std::vector<std::pair<double, double>> roc, pr;
};

struct EvalReport {
  int64_t step = 0, epoch = 0;
  Choice<TaskKind> task = TaskKind::classification;  // task.kind
  std::string split;                                 // validation | test
  // The weights evaluated, when not the model's at `step`: the final test
  // split's report of a run with a validation split is the best checkpoint's
  // ("best", of weightsStep), as the headline test figures are. "": the step's own.
  std::string weights;
  int64_t weightsStep = 0;
  double loss = 0, accuracy = 0;
  // A regression: the targets' figures averaged over the targets (as
  // scikit-learn's multioutput "uniform_average"), each target's, and the
  // first examples' actual and predicted values (a row per example, a value
  // per target) for the predicted-against-actual plot and the residuals.
  double rmse = 0, mae = 0, r2 = 0;
  std::vector<TargetFigures> targets;
  std::vector<std::vector<double>> actual, predicted;
  // A multi-label's: accuracy is the subset accuracy (every label right);
  // F1 over all decisions (micro) and the labels' mean (macro); mAP, the
  // labels' mean average precision; each label's figures.
  double microF1 = 0, macroF1 = 0, map = 0;
  std::vector<LabelFigures> labels;
  // task.kind detection: COCOeval.stats (studio/coco_eval.h: AP@[.50:.95],
  // AP50, AP75, AP small/medium/large, AR@1/10/100, AR small/medium/large;
  // map is the first) and AP@[.50:.95] per class (NaN: none in the split).
  std::vector<double> coco;
  std::vector<double> apPerClass;
  // And each class's precision-recall curve at IoU 0.5 (area all, 100
  // detections): its precision at recall 0, 0.01, .., 1 (COCOeval's
  // eval['precision'][0, :, k, 0, 2]; -1 past the recall it reaches); empty
  // for a class with no box in the split.
  std::vector<std::vector<double>> precision50;
  // task.kind instance_segmentation: the boxes' figures above, and the
  // masks' (COCOeval with iouType "segm"): its stats and AP per class.
  std::vector<double> maskCoco;
  std::vector<double> maskApPerClass;
  // task.kind segmentation: the figures of the pixels' confusion matrix
  // (studio/segmentation_figures.h; the matrix in confusion, in pixels;
  // examples: the images; accuracy: the pixel accuracy).
  SegmentationFigures segmentation;
  int64_t examples = 0;
  std::vector<std::string> classes;
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  std::vector<ClassFigures> perClass;
  std::vector<WrongExample> wrong;  // most confident first
  // Classification: the reliability diagram and its expected calibration
  // error (empty count: not computed).
  Reliability reliability;
  std::string thumbnails;  // the PNG beside the report ("" for tables)
  int64_t thumbnailHeight = 0, thumbnailWidth = 0;
};

// Examples whose values a regression's report keeps for its plots.
inline constexpr int64_t kReportedPoints = 2000;

// A multi-label's figures from each example's probabilities and 0/1 truths
// (examples x labels, row-major) at each label's threshold: labels, accuracy, microF1,
// macroF1, map, examples (as scikit-learn's f1_score, accuracy_score,
// average_precision_score; an undefined F1 counts 0).
void computeLabelFigures(EvalReport& report, const std::vector<std::string>& labelNames,
                         const std::vector<float>& probabilities, const std::vector<uint8_t>& truth,
                         const std::vector<double>& thresholds);

// A report's confusion matrix, classes x classes counts (of examples, or a
// segmentation's pixels); throws InputError saying what is wrong.
std::vector<std::vector<int64_t>> confusionFromJson(const nlohmann::json& matrix, size_t classes);

// Fills perClass (and examples, accuracy) from classes and confusion.
void computeClassFigures(EvalReport& report);

nlohmann::json toJson(const EvalReport& report);
// A segmentation's report (records/segmentation_report.cpp): its JSON, and
// its fields read back (throws InputError saying what is wrong).
nlohmann::json segmentationReportJson(const EvalReport& report);
void readSegmentationReport(const nlohmann::json& json, EvalReport& report);
// Throws InputError naming `path` when the JSON is not a report.
EvalReport evalReportFromJson(const nlohmann::json& json, const std::string& path);
EvalReport readEvalReport(const std::string& path);

}  // namespace studio
