#pragma once
// What a run learns: the loss its step minimises, how a split's predictions
// become figures, and what an evaluation's report holds. Single-label
// classification (classification.cpp) is the one task today; another is a
// file in this folder and one line in the registry (registry.cpp).
// Thread: engine thread.

#include <memory>
#include <string>

#include <torch/types.h>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "models/model.h"
#include "studio/data_plan.h"
#include "studio/eval_report.h"
#include "train/tasks/classification_eval.h"

namespace studio {

// Where an evaluation's figures came from, for its report.
struct ReportInput {
  int64_t step = 0, epoch = 0;
  bool validation = false;  // the validation split, else the test split
  const DataSplits& data;
  const DataPlan& plan;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // The mean loss of a micro-batch as a float32 scalar; runs inside the
  // recorded step, so it never reads a value back to the host.
  virtual torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) const = 0;
  // A split's loss and figures, without autograd, in one host sync.
  virtual EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform,
                               const EvalOptions& options, const torch::Device& device) const = 0;
  // The report written to eval/step-N.json.
  virtual EvalReport report(const EvalOutcome& outcome, const ReportInput& input) const = 0;
};

// Throws std::invalid_argument naming the kinds there are.
std::unique_ptr<Task> makeTask(const std::string& kind);

}  // namespace studio
