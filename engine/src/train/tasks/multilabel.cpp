// Multi-label classification: any number of labels per example (task.kind
// multilabel). The loss is binary cross-entropy on each label's logit
// (binary_cross_entropy_with_logits, with loss.pos_weight); an evaluation
// gathers every example's probabilities (one sync) and reports per-label
// precision, recall, F1, average precision and ROC AUC with their curves,
// micro and macro F1, mAP and the subset accuracy (studio/eval_report.h).
#include <torch/nn/functional/loss.h>

#include "dist/process_group.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

class Multilabel : public Task {
 public:
  explicit Multilabel(const TaskData& data) {
    if (!data.weights.empty())
      m_posWeight = torch::tensor(data.weights, torch::kFloat64).to(data.device, torch::kFloat32);
  }
  std::string name() const override { return "multilabel"; }

  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) const override {
    return lossOf(output.to(torch::kFloat32), target, false);
  }

  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                       const torch::Device& device) const override {
    EvalOutcome r;
    const int64_t n = set.size(), labels = static_cast<int64_t>(o.targetNames.size());
    if (n == 0 || labels == 0) return r;
    torch::InferenceMode inference;
    torch::Tensor lossSum = torch::zeros({1}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
    std::vector<torch::Tensor> rows;  // [probabilities, truths] of each batch
    forEachEvalBatch(model, set, transform, o, device,
                     [&](const torch::Tensor& out, const torch::Tensor& y, int64_t, int64_t) {
                       lossSum += lossOf(out, y, true).to(torch::kFloat64) / static_cast<double>(labels);
                       rows.push_back(torch::cat({torch::sigmoid(out), y.to(torch::kFloat32)}, 1));
                     });
    torch::Tensor all =
        rows.empty() ? torch::zeros({0, 2 * labels}, lossSum.options().dtype(torch::kFloat32)) : torch::cat(rows);
    if (o.group) {
      std::vector<torch::Tensor> sum{lossSum};
      o.group->allReduceSum(sum, "the evaluation's loss");
      all = gatherRows(all, n, *o.group);
    }
    // The one sync of an evaluation.
    const torch::Tensor host = all.cpu().contiguous();
    r.loss = lossSum.item<double>() / static_cast<double>(n);
    const int64_t count = host.size(0);
    std::vector<float> probs(static_cast<size_t>(count * labels));
    std::vector<uint8_t> truth(probs.size());
    const float* v = host.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i)
      for (int64_t k = 0; k < labels; ++k) {
        probs[static_cast<size_t>(i * labels + k)] = v[i * 2 * labels + k];
        truth[static_cast<size_t>(i * labels + k)] = v[i * 2 * labels + labels + k] > 0.5f;
      }
    EvalReport figures;
    std::vector<double> thresholds = o.thresholds;
    if (o.tuneThresholds) {  // this split's best-F1 thresholds, then the figures at them
      computeLabelFigures(figures, o.targetNames, probs, truth, thresholds);
      thresholds.clear();
      for (const auto& l : figures.labels) thresholds.push_back(l.bestThreshold);
    }
    computeLabelFigures(figures, o.targetNames, probs, truth, thresholds);
    r.accuracy = figures.accuracy;
    r.map = figures.map;
    r.microF1 = figures.microF1;
    r.macroF1 = figures.macroF1;
    r.labels = std::move(figures.labels);
    return r;
  }

  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override {
    EvalReport r = reportFor(name(), o, in);
    r.map = o.map;
    r.microF1 = o.microF1;
    r.macroF1 = o.macroF1;
    r.labels = o.labels;
    return r;
  }

 private:
  // The mean over the batch's labels, or their sum.
  torch::Tensor lossOf(const torch::Tensor& out, const torch::Tensor& y, bool sum) const {
    auto o = torch::nn::functional::BinaryCrossEntropyWithLogitsFuncOptions();
    if (sum) o.reduction(torch::kSum);
    if (m_posWeight.defined()) o.pos_weight(m_posWeight);
    return torch::nn::functional::binary_cross_entropy_with_logits(out, y, o);
  }
  torch::Tensor m_posWeight;  // per label, on the device; undefined: none
};

}  // namespace

std::unique_ptr<Task> makeMultilabel(const TrainConfig&, const TaskData& data) {
  return std::make_unique<Multilabel>(data);
}

}  // namespace studio
