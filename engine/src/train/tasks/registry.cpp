// The tasks a run can learn, by name.
#include <stdexcept>
#include <utility>

#include "train/tasks/task.h"

namespace studio {

#define STUDIO_TASKS(X)                           \
  X(TaskKind::classification, makeClassification) \
  X(TaskKind::regression, makeRegression)         \
  X(TaskKind::multilabel, makeMultilabel)         \
  X(TaskKind::detection, makeDetection)           \
  X(TaskKind::segmentation, makeSegmentation)     \
  X(TaskKind::instance_segmentation, makeInstanceSegmentation)

#define STUDIO_DECLARE(name, make) std::unique_ptr<Task> make(const TrainConfig&, const TaskData&);
STUDIO_TASKS(STUDIO_DECLARE)
#undef STUDIO_DECLARE

torch::Tensor Task::modelLoss(Model&, const torch::Tensor&, const torch::Tensor&, torch::Tensor&) const {
  throw std::logic_error("task " + name() + " computes its loss from the model's outputs (loss())");
}

Figures Task::figures(const EvalOutcome& o) const {
  Figures f;
  for (const auto& [id, value] : {std::pair<const char*, double>{"eval_loss", o.loss},
                                  {"eval_accuracy", o.accuracy},
                                  {"eval_r2", o.r2},
                                  {"eval_rmse", o.rmse},
                                  {"eval_mae", o.mae},
                                  {"eval_map", o.map},
                                  {"eval_f1", o.macroF1},
                                  {"eval_auc", o.rocAuc},
                                  {"eval_ece", o.reliability.ece}})
    f.set(id, value);
  return f;
}

std::unique_ptr<Task> makeTask(const TrainConfig& config, const TaskData& data) {
  const auto& kind = config.task.kind;
  std::string known;
#define STUDIO_MAKE(name, make)                \
  if (kind == name) return make(config, data); \
  known += std::string(known.empty() ? "" : ", ") + nameOf(name);
  STUDIO_TASKS(STUDIO_MAKE)
#undef STUDIO_MAKE
  throw std::invalid_argument("task " + kind + " is not one of " + known);
}

}  // namespace studio
