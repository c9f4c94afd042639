// Regression: one or several numbers per example (task.kind regression).
// The loss compares the model's outputs with the standardised targets (MSE,
// L1, Huber or smooth L1, as torch.nn.functional's: loss.kind); the figures are in the
// data's units: RMSE, MAE and R² per target and averaged over them.
#include <ATen/ops/huber_loss.h>
#include <ATen/ops/l1_loss.h>
#include <ATen/ops/mse_loss.h>
#include <ATen/ops/smooth_l1_loss.h>

#include "train/tasks/regression_eval.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

class Regression : public Task {
 public:
  explicit Regression(const LossConfig& c)
      : m_loss(c.kind == LossKind::auto_ ? LossKind::mse : c.kind.value()), m_delta(c.huber_delta) {}
  std::string name() const override { return "regression"; }

  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) const override {
    return lossOf(output.to(torch::kFloat32), target, at::Reduction::Mean);
  }

  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override {
    return evaluateRegression(
        model, set, transform, options, device,
        [this](const torch::Tensor& out, const torch::Tensor& y) { return lossOf(out, y, at::Reduction::Sum); });
  }

  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override {
    EvalReport r = reportFor(name(), o, in);
    r.rmse = o.rmse;
    r.mae = o.mae;
    r.r2 = o.r2;
    r.targets = o.targets;
    r.actual = o.actual;
    r.predicted = o.predicted;
    return r;
  }

 private:
  torch::Tensor lossOf(const torch::Tensor& out, const torch::Tensor& y, int64_t reduction) const {
    if (m_loss == LossKind::l1) return at::l1_loss(out, y, reduction);
    if (m_loss == LossKind::huber) return at::huber_loss(out, y, reduction, m_delta);
    if (m_loss == LossKind::smooth_l1) return at::smooth_l1_loss(out, y, reduction, m_delta);
    return at::mse_loss(out, y, reduction);
  }
  LossKind m_loss;  // mse, l1, huber or smooth_l1 (validate() allows no other)
  double m_delta;
};

}  // namespace

std::unique_ptr<Task> makeRegression(const TrainConfig& config, const TaskData&) {
  return std::make_unique<Regression>(config.loss);
}

}  // namespace studio
