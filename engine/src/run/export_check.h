#pragma once
// The export's proof (studio/session.h, ExportOptions): the run's own
// examples and the studio's outputs on them, written for the check in the
// studio's Python (resources/export/studio_export.py), and that check run.
// Thread: the caller's (the CLI's main thread, a worker of the window's).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/data_loading.h"
#include "studio/session.h"

namespace studio {

class Model;

// What the examples file holds besides its tensors, for the model card.
struct CheckExamples {
  std::string split;                             // test, validation or training: where they came from
  int64_t splitSize = 0;                         // that split's examples
  std::vector<int64_t> trainCounts, testCounts;  // per class (classifiers)
};

// The run's data loaded as the run did (InputError saying why it could not
// be), and the split the check's examples come from: the test split, else
// the validation split, else the training split.
struct CheckData {
  DataSplits data;
  std::shared_ptr<ExampleSet> source;
  CheckExamples facts;  // the split's name and size, the classes' counts
};
CheckData loadCheckData(const TrainConfig& cfg);
// n examples spread evenly over the set (its order is the plan's, often
// class by class: the first n could be one class).
Examples spreadExamples(const Dataset& set, int64_t n);

// The model's outputs (float32) on raw examples as stored, preprocessed by
// t as its evaluation does, in eval mode on the CPU, 64 at a time.
torch::Tensor studioOutputs(Model& model, const torch::Tensor& raw, const LoaderOptions& t);
// The examples file: the tensors, and the split they came from as metadata.
void writeExamplesFile(const std::string& file, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const CheckExamples& facts);

// Loads the run's data as the run did and writes `file` (safetensors):
// parity_x, up to o.parityExamples raw examples (uint8 pixels as stored, or
// the table's float features) evenly spread over the test split;
// studio_outputs, the model's outputs on them in eval mode (logits, or
// standardised values), preprocessed as the run evaluated; with
// o.quantize int8, test_x and test_y (the split's examples, up to 10,000 and
// 256 MiB) and calibration_x (o.calibrationExamples training examples).
// Throws InputError when the data cannot be loaded.
CheckExamples writeCheckExamples(const TrainConfig& cfg, const nlohmann::json& info, Model& model,
                                 const ExportOptions& o, const std::string& file);

// Runs the check on the export's files in outDir; its lines (also in
// export.json's figures). Exit 1 of the check: ExportCheckFailed with its
// words and where the files are kept (keptIn: the export folder they are
// moved to); exit 2: InputError (a module missing, an opset the exporter
// refuses).
std::vector<std::string> runExportCheck(const std::string& outDir, const std::string& examples, const ExportOptions& o,
                                        const std::string& keptIn);

}  // namespace studio
