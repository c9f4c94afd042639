#include "train/tasks/classification_eval.h"

#include <torch/nn/functional/loss.h>

#include "dist/process_group.h"
#include "train/autocast_scope.h"

namespace studio {

void forEachEvalBatch(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                      const torch::Device& device, const EvalBatchFn& fn) {
  torch::InferenceMode inference;
  const int64_t n = set.size();
  int64_t from = 0, to = n;
  if (o.group) {
    from = n * o.group->rank() / o.group->world();
    to = n * (o.group->rank() + 1) / o.group->world();
  }
  const int64_t batches = (to - from + o.batchSize - 1) / o.batchSize;
  if (o.progress) o.progress(0, batches);
  model.setTraining(false);
  for (int64_t start = from; start < to; start += o.batchSize) {
    const int64_t end = std::min(start + o.batchSize, to);
    if (o.progress && start > from) o.progress((start - from) / o.batchSize, batches);
    Examples e = set.slice(start, end);
    torch::Tensor x = transformBatch(e.x.to(device, /*non_blocking=*/true), transform, 0, false);
    if (o.channelsLast && x.dim() == 4) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
    const torch::Tensor y = e.y.to(device, /*non_blocking=*/true);
    torch::Tensor out;
    {
      AutocastScope ac(device.type(), o.autocast, o.autocastDtype);
      out = model.forward(x);
    }
    fn(out.to(torch::kFloat32), y, start, end);
  }
  model.setTraining(true);
}

EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                     const torch::Device& device) {
  EvalOutcome r;
  r.accuracy = 0;
  const int64_t n = set.size(), k = o.classes;
  r.confusion.assign(static_cast<size_t>(k), std::vector<int64_t>(static_cast<size_t>(k), 0));
  if (n == 0) return r;
  torch::InferenceMode inference;
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  torch::Tensor lossSum = torch::zeros({}, f64);
  torch::Tensor confusion = torch::zeros({k * k}, f64.dtype(torch::kInt64));
  std::vector<torch::Tensor> wrongConf, wrongIndex, wrongTrue, wrongPred;
  forEachEvalBatch(model, set, transform, o, device, [&](const torch::Tensor& logits, const torch::Tensor& y,
                                                         int64_t start, int64_t end) {
    lossSum += torch::nn::functional::cross_entropy(
        logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    auto [conf, pred] = torch::softmax(logits, 1).max(1);
    // scatter_add, not bincount: bincount on CUDA reads its maximum to the host.
    confusion.scatter_add_(0, y * k + pred, torch::ones_like(y));
    // This batch's most confident mistakes; the best of them all at the end.
    torch::Tensor wrongOnly = torch::where(pred.ne(y), conf, torch::full_like(conf, -1.0));
    const int64_t keep = std::min<int64_t>(o.wrongToKeep, end - start);
    auto [top, at] = wrongOnly.topk(keep);
    wrongConf.push_back(top);
    wrongIndex.push_back(at + start);
    wrongTrue.push_back(y.index_select(0, at));
    wrongPred.push_back(pred.index_select(0, at));
  });
  // The candidates for the most confident mistakes, padded to wrongToKeep
  // (confidence -1: no mistake): [confidence, index, truth, predicted].
  const int64_t keepAll = o.wrongToKeep;
  torch::Tensor candidates = torch::full({4, keepAll}, -1.0, f64);
  if (!wrongConf.empty()) {
    torch::Tensor found = torch::stack({torch::cat(wrongConf).to(torch::kFloat64),
                                        torch::cat(wrongIndex).to(torch::kFloat64),
                                        torch::cat(wrongTrue).to(torch::kFloat64),
                                        torch::cat(wrongPred).to(torch::kFloat64)});
    candidates = torch::cat({found, candidates}, 1);
  }
  torch::Tensor totals = torch::cat({lossSum.view({1}), confusion.to(torch::kFloat64)});
  if (o.group) {
    std::vector<torch::Tensor> sum{totals};
    o.group->allReduceSum(sum, "the evaluation's figures");
    // Each rank's best candidates, then the best of them all.
    auto [top, at] = candidates[0].topk(keepAll);
    candidates = o.group->allGather(candidates.index_select(1, at), "the evaluation's mistakes")
                     .permute({1, 0, 2})
                     .reshape({4, -1});
  }
  const int64_t keep = keepAll;
  auto [top, at] = candidates[0].topk(keep);
  // The one sync of an evaluation.
  torch::Tensor figures = torch::cat({totals, candidates.index_select(1, at).reshape({-1})}).cpu();
  const double* f = figures.data_ptr<double>();
  r.loss = f[0] / static_cast<double>(n);
  int64_t correct = 0;
  for (int64_t t = 0; t < k; ++t)
    for (int64_t p = 0; p < k; ++p) {
      const auto c = static_cast<int64_t>(f[1 + t * k + p]);
      r.confusion[static_cast<size_t>(t)][static_cast<size_t>(p)] = c;
      if (t == p) correct += c;
    }
  r.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  const double* w = f + 1 + k * k;
  for (int64_t i = 0; i < keep; ++i) {
    if (w[i] < 0) break;  // fewer mistakes than places
    r.wrong.push_back({static_cast<int64_t>(w[keep + i]), static_cast<int64_t>(w[2 * keep + i]),
                       static_cast<int64_t>(w[3 * keep + i]), w[i]});
  }
  return r;
}

}  // namespace studio
