// The tasks a run can learn, by name.
#include <stdexcept>
#include <utility>

#include "train/tasks/task.h"

namespace studio {

#define STUDIO_TASKS(X)                           \
  X(TaskKind::classification, makeClassification) \
  X(TaskKind::regression, makeRegression)         \
  X(TaskKind::multilabel, makeMultilabel) X(TaskKind::detection, makeDetection)

#define STUDIO_DECLARE(name, make) std::unique_ptr<Task> make(const TrainConfig&, const TaskData&);
STUDIO_TASKS(STUDIO_DECLARE)
#undef STUDIO_DECLARE

torch::Tensor Task::modelLoss(Model&, const torch::Tensor&, const torch::Tensor&, torch::Tensor&) const {
  throw std::logic_error("task " + name() + " computes its loss from the model's outputs (loss())");
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
