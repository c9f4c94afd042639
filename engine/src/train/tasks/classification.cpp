// Single-label classification: cross-entropy on the logits (with class
// weights and label smoothing as torch.nn.functional.cross_entropy takes
// them), or focal loss; accuracy, the confusion matrix, per-class figures and
// the most confidently wrong examples. The evaluation's loss is the plain
// cross-entropy whatever the loss, so runs with other losses compare.
#include <torch/nn/functional/loss.h>

#include "train/tasks/task.h"

namespace studio {
namespace {

class Classification : public Task {
 public:
  Classification(const LossConfig& c, const TaskData& data)
      : m_focal(c.kind == LossKind::focal), m_gamma(c.focal_gamma), m_smoothing(c.label_smoothing) {
    if (!data.weights.empty())
      m_weights = torch::tensor(data.weights, torch::kFloat64).to(data.device, torch::kFloat32);
  }
  std::string name() const override { return "classification"; }

  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& labels) const override {
    const torch::Tensor logits = output.to(torch::kFloat32);
    if (!m_focal) {
      auto o = torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(m_smoothing);
      if (m_weights.defined()) o.weight(m_weights);
      return torch::nn::functional::cross_entropy(logits, labels, o);
    }
    // Focal loss: -(1 - p_y)^gamma log p_y, the mean weighted as
    // cross_entropy weighs it (by the labels' weights).
    const torch::Tensor logp = torch::log_softmax(logits, 1).gather(1, labels.unsqueeze(1)).squeeze(1);
    const torch::Tensor f = (1 - logp.exp()).pow(m_gamma) * logp.neg();
    if (!m_weights.defined()) return f.mean();
    const torch::Tensor w = m_weights.index_select(0, labels);
    return (f * w).sum() / w.sum();
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
    for (size_t c = 0; c < o.classCurves.size() && c < r.perClass.size(); ++c) {
      r.perClass[c].averagePrecision = o.classCurves[c].averagePrecision;
      r.perClass[c].rocAuc = o.classCurves[c].rocAuc;
      r.perClass[c].roc = o.classCurves[c].roc;
      r.perClass[c].pr = o.classCurves[c].pr;
    }
    r.reliability = o.reliability;
    r.loss = o.loss;
    for (const auto& w : o.wrong)
      r.wrong.push_back(
          {w.index, exampleSource(in.plan, items[static_cast<size_t>(w.index)]), w.truth, w.predicted, w.confidence});
    return r;
  }

 private:
  bool m_focal;
  double m_gamma, m_smoothing;
  torch::Tensor m_weights;  // per class, on the device; undefined: none
};

}  // namespace

std::unique_ptr<Task> makeClassification(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<Classification>(config.loss, data);
}

}  // namespace studio
