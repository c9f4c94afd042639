#pragma once
// What one evaluation shows: loss and accuracy, the confusion matrix (rows:
// true class, columns: predicted), per-class precision, recall, F1 and
// one-vs-rest accuracy, and the examples the model got wrong with the most
// confidence. Written by the engine as eval/step-<N>.json and read by the
// window (live, and to compare runs). Torch-free.
// Thread: plain data and free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace studio {

struct ClassFigures {
  std::string name;
  int64_t support = 0;    // examples of this class
  int64_t predicted = 0;  // examples predicted as this class
  int64_t correct = 0;
  double precision = 0, recall = 0, f1 = 0, accuracy = 0;  // NaN when undefined (nothing predicted / no support)
};

struct WrongExample {
  int64_t index = 0;        // position in the evaluated split
  std::string source;       // the file, or "table.csv row 17", or "t10k image 312"
  int64_t truth = 0, predicted = 0;
  double confidence = 0;    // softmax probability of the predicted class
};

// A regression target's figures on a split, in the data's units (as
// scikit-learn's root_mean_squared_error, mean_absolute_error, r2_score).
struct TargetFigures {
  std::string name;
  double rmse = 0, mae = 0, r2 = 0;
  double mean = 0, std = 0;  // of the actual values (population std)
};

struct EvalReport {
  int64_t step = 0, epoch = 0;
  std::string task = "classification";  // task.kind
  std::string split;        // validation | test
  double loss = 0, accuracy = 0;
  // A regression: the targets' figures averaged over the targets (as
  // scikit-learn's multioutput "uniform_average"), each target's, and the
  // first examples' actual and predicted values (a row per example, a value
  // per target) for the predicted-against-actual plot and the residuals.
  double rmse = 0, mae = 0, r2 = 0;
  std::vector<TargetFigures> targets;
  std::vector<std::vector<double>> actual, predicted;
  int64_t examples = 0;
  std::vector<std::string> classes;
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  std::vector<ClassFigures> perClass;
  std::vector<WrongExample> wrong;              // most confident first
  std::string thumbnails;                       // the PNG beside the report ("" for tables)
  int64_t thumbnailHeight = 0, thumbnailWidth = 0;
};

// Examples whose values a regression's report keeps for its plots.
inline constexpr int64_t kReportedPoints = 2000;

// Fills perClass (and examples, accuracy) from classes and confusion.
void computeClassFigures(EvalReport& report);

nlohmann::json toJson(const EvalReport& report);
// Throws InputError naming `path` when the JSON is not a report.
EvalReport evalReportFromJson(const nlohmann::json& json, const std::string& path);
EvalReport readEvalReport(const std::string& path);

}  // namespace studio
