#pragma once
// What a run learns: the loss its step minimises, how a split's predictions
// become figures, and what an evaluation's report holds. Single-label
// classification (classification.cpp) and regression (regression.cpp); another
// is a file in this folder and one line in the registry (registry.cpp).
// Thread: engine thread.

#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "models/model.h"
#include "studio/data_plan.h"
#include "studio/eval_report.h"
#include "studio/run_summary.h"
#include "studio/train_config.h"
#include "train/tasks/classification_eval.h"

namespace studio {

// Where an evaluation's figures came from, for its report.
struct ReportInput {
  int64_t step = 0, epoch = 0;
  bool validation = false;  // the validation split, else the test split
  const DataSplits& data;
  const DataPlan& plan;
};

// A report's fields every task fills alike: the task, where, the loss, the
// accuracy, the split's examples.
inline EvalReport reportFor(const std::string& task, const EvalOutcome& o, const ReportInput& in) {
  EvalReport r;
  r.task.setName(task);
  r.step = in.step;
  r.epoch = in.epoch;
  r.split = in.validation ? "validation" : "test";
  r.loss = o.loss;
  r.accuracy = o.accuracy;
  r.examples = (in.validation ? in.data.val : in.data.test)->size();
  return r;
}

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // The mean loss of a micro-batch as a float32 scalar; runs inside the
  // recorded step, so it never reads a value back to the host.
  virtual torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) const = 0;
  // A task whose model computes its loss from the targets in its forward
  // pass (a detector, train/tasks/detection.h): the mean loss of a
  // micro-batch from its inputs and targets as a float32 scalar, run under
  // the step's autocast, drawing from the default generators; `parts` gets
  // the loss's parts (float32 [lossParts().size()], detached). Others: the
  // model's forward pass, then loss().
  virtual bool lossInModel() const { return false; }
  virtual torch::Tensor modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                                  torch::Tensor& parts) const;
  // The names of modelLoss's parts (metrics.csv's columns), in its order.
  virtual std::vector<std::string> lossParts() const { return {}; }
  // A split's loss and figures, without autograd, in one host sync.
  virtual EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform,
                               const EvalOptions& options, const torch::Device& device) const = 0;
  // The report written to eval/step-N.json.
  virtual EvalReport report(const EvalOutcome& outcome, const ReportInput& input) const = 0;
  // An evaluation's figures, keyed by the metric catalog's ids: those the
  // outcome has of loss, accuracy, R², RMSE, MAE, mAP, macro F1, ROC AUC and
  // ECE (a task adds its own).
  virtual Figures figures(const EvalOutcome& outcome) const;
};

// What a task is made with besides the settings: its loss weights (a
// classifier's per class, a multi-label's per label's positives; empty: none;
// DataSplits::lossWeights) and the device its tensors live on.
struct TaskData {
  std::vector<double> weights;
  torch::Device device = torch::kCPU;
  // task.kind detection: the data's boxes (DataPlan::boxes), the ground
  // truth its evaluations score against in each image's own pixels.
  std::shared_ptr<const BoxAnnotations> boxes;
  // task.kind segmentation: the classes, and the images' per-channel mean
  // and std (DataSplits), which the task applies after its augmentations.
  int64_t classes = 0;
  std::vector<double> mean, std;
};

// The task of config.task.kind with config.loss. Throws std::invalid_argument
// naming the kinds there are.
std::unique_ptr<Task> makeTask(const TrainConfig& config, const TaskData& data = {});

}  // namespace studio
