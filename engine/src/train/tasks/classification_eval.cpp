#include "train/tasks/classification_eval.h"

#include <torch/nn/functional/loss.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dist/process_group.h"
#include "models/autocast_scope.h"
#include "studio/calibration.h"

namespace studio {

void forEachEvalSlice(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                      const torch::Device& device, const EvalSliceFn& fn) {
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
    const torch::Tensor x = transformBatch(e.x.to(device, /*non_blocking=*/true), transform, 0, false);
    fn(x, e.y.to(device, /*non_blocking=*/true), start, end);
  }
  model.setTraining(true);
}

void forEachEvalBatch(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                      const torch::Device& device, const EvalBatchFn& fn) {
  forEachEvalSlice(model, set, transform, o, device,
                   [&](const torch::Tensor& batch, const torch::Tensor& y, int64_t start, int64_t end) {
                     torch::Tensor x = batch;
                     if (o.channelsLast && x.dim() == 4) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
                     torch::Tensor out;
                     {
                       AutocastScope ac(device.type(), o.autocast, o.autocastDtype);
                       out = model.forward(x);
                     }
                     fn(out.to(torch::kFloat32), y, start, end);
                   });
}

torch::Tensor gatherRows(const torch::Tensor& mine, int64_t n, ProcessGroup& group) {
  const int64_t world = group.world(), most = (n + world - 1) / world;
  torch::Tensor padded = torch::zeros({most, mine.size(1)}, mine.options());
  padded.narrow(0, 0, mine.size(0)).copy_(mine);
  const torch::Tensor all = group.allGather(padded, "the evaluation's probabilities");  // [world, most, columns]
  std::vector<torch::Tensor> parts;
  for (int64_t r = 0; r < world; ++r) parts.push_back(all[r].narrow(0, 0, n * (r + 1) / world - n * r / world));
  return torch::cat(parts);
}

torch::Tensor gatherUnevenRows(const torch::Tensor& mine, ProcessGroup& group, const std::string& what) {
  const torch::Tensor counts =
      group.allGather(torch::full({1}, mine.size(0), mine.options().dtype(torch::kInt64)), what).cpu();
  const int64_t world = group.world(), most = std::max<int64_t>(1, counts.max().item<int64_t>());
  torch::Tensor padded = torch::zeros({most, mine.size(1)}, mine.options());
  padded.narrow(0, 0, mine.size(0)).copy_(mine);
  const torch::Tensor all = group.allGather(padded, what);  // [world, most, columns]
  std::vector<torch::Tensor> parts;
  for (int64_t r = 0; r < world; ++r) parts.push_back(all[r].narrow(0, 0, counts[r][0].item<int64_t>()));
  return torch::cat(parts);
}

namespace {

// Each class's one-vs-rest curves and the reliability diagram from every
// example's probabilities and label ([n, classes + 1], on the CPU).
void addCurves(EvalOutcome& r, const torch::Tensor& rows, int64_t k) {
  const torch::Tensor host = rows.contiguous();
  const int64_t n = host.size(0);
  const float* v = host.data_ptr<float>();
  std::vector<float> confidence(static_cast<size_t>(n));
  std::vector<uint8_t> correct(static_cast<size_t>(n));
  std::vector<std::vector<float>> scores(static_cast<size_t>(k), std::vector<float>(static_cast<size_t>(n)));
  std::vector<std::vector<uint8_t>> truth(static_cast<size_t>(k), std::vector<uint8_t>(static_cast<size_t>(n)));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = v + i * (k + 1);
    const auto label = static_cast<int64_t>(row[k]);
    int64_t best = 0;
    for (int64_t c = 0; c < k; ++c) {
      scores[static_cast<size_t>(c)][static_cast<size_t>(i)] = row[c];
      truth[static_cast<size_t>(c)][static_cast<size_t>(i)] = c == label;
      if (row[c] > row[best]) best = c;
    }
    confidence[static_cast<size_t>(i)] = row[best];
    correct[static_cast<size_t>(i)] = best == label;
  }
  double aucSum = 0;
  int64_t aucs = 0;
  for (int64_t c = 0; c < k; ++c) {
    r.classCurves.push_back(binaryCurves(scores[static_cast<size_t>(c)], truth[static_cast<size_t>(c)]));
    if (!std::isnan(r.classCurves.back().rocAuc)) {
      aucSum += r.classCurves.back().rocAuc;
      ++aucs;
    }
  }
  r.rocAuc = aucs > 0 ? aucSum / static_cast<double>(aucs) : std::numeric_limits<double>::quiet_NaN();
  r.reliability = reliabilityOf(confidence, correct);
}

}  // namespace

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
  const bool curves = n * k <= kCurveValuesCap;
  std::vector<torch::Tensor> probRows;  // [probabilities, label] of each example, for the curves
  forEachEvalBatch(model, set, transform, o, device,
                   [&](const torch::Tensor& logits, const torch::Tensor& y, int64_t start, int64_t end) {
                     lossSum += torch::nn::functional::cross_entropy(
                         logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
                     const torch::Tensor probs = torch::softmax(logits, 1);
                     auto [conf, pred] = probs.max(1);
                     if (curves) probRows.push_back(torch::cat({probs, y.unsqueeze(1).to(torch::kFloat32)}, 1));
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
    torch::Tensor found =
        torch::stack({torch::cat(wrongConf).to(torch::kFloat64), torch::cat(wrongIndex).to(torch::kFloat64),
                      torch::cat(wrongTrue).to(torch::kFloat64), torch::cat(wrongPred).to(torch::kFloat64)});
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
  if (curves && !probRows.empty()) {
    torch::Tensor rows = torch::cat(probRows);
    if (o.group) rows = gatherRows(rows, n, *o.group);
    addCurves(r, rows.cpu(), k);  // after the sync above: a copy, not a wait
  }
  return r;
}

}  // namespace studio
