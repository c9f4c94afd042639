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

struct EvalReport {
  int64_t step = 0, epoch = 0;
  std::string split;        // validation | test
  double loss = 0, accuracy = 0;
  int64_t examples = 0;
  std::vector<std::string> classes;
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  std::vector<ClassFigures> perClass;
  std::vector<WrongExample> wrong;              // most confident first
  std::string thumbnails;                       // the PNG beside the report ("" for tables)
  int64_t thumbnailHeight = 0, thumbnailWidth = 0;
};

// Fills perClass (and examples, accuracy) from classes and confusion.
void computeClassFigures(EvalReport& report);

nlohmann::json toJson(const EvalReport& report);
// Throws InputError naming `path` when the JSON is not a report.
EvalReport evalReportFromJson(const nlohmann::json& json, const std::string& path);
EvalReport readEvalReport(const std::string& path);

}  // namespace studio
