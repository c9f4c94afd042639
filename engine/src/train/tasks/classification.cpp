// Single-label classification: cross-entropy on the logits, accuracy, the
// confusion matrix, per-class figures and the most confidently wrong examples.
#include <torch/nn/functional/loss.h>

#include "train/tasks/task.h"

namespace studio {
namespace {

class Classification : public Task {
 public:
  std::string name() const override { return "classification"; }

  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& labels) const override {
    return torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), labels);
  }

  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override {
    return studio::evaluate(model, set, transform, options, device);
  }

  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override {
    const std::vector<int64_t>& items = in.validation ? in.data.valItems : in.data.testItems;
    EvalReport r;
    r.step = in.step;
    r.epoch = in.epoch;
    r.split = in.validation ? "validation" : "test";
    r.classes = in.data.classNames;
    r.confusion = o.confusion;
    computeClassFigures(r);
    r.loss = o.loss;
    for (const auto& w : o.wrong)
      r.wrong.push_back({w.index, exampleSource(in.plan, items[static_cast<size_t>(w.index)]), w.truth, w.predicted,
                         w.confidence});
    return r;
  }
};

}  // namespace

std::unique_ptr<Task> makeClassification() { return std::make_unique<Classification>(); }

}  // namespace studio
