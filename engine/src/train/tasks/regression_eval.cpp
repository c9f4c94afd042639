#include "train/tasks/regression_eval.h"

#include <cmath>

#include "dist/process_group.h"

namespace studio {
namespace {

// scikit-learn's r2_score for one target: 1 - SSres / SStot; a target that
// does not vary in the split gives 1 when predicted exactly, else 0 (its
// force_finite).
double r2Of(double ssRes, double ssTot) {
  if (ssTot > 0) return 1.0 - ssRes / ssTot;
  return ssRes == 0 ? 1.0 : 0.0;
}

}  // namespace

EvalOutcome evaluateRegression(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& o,
                               const torch::Device& device, const SummedLoss& summedLoss) {
  EvalOutcome r;
  const std::vector<std::string>& names = o.targetNames;
  const int64_t n = set.size(), t = static_cast<int64_t>(names.size());
  if (n == 0 || t == 0) return r;
  torch::InferenceMode inference;
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  const torch::Tensor mean = torch::tensor(o.targetMean, torch::kFloat64).to(device);
  const torch::Tensor std = torch::tensor(o.targetStd, torch::kFloat64).to(device);
  // [loss, then per target: squared errors, absolute errors, sum and sum of
  // squares of the actual values]
  torch::Tensor lossSum = torch::zeros({1}, f64);
  torch::Tensor sums = torch::zeros({4, t}, f64);
  std::vector<torch::Tensor> actual, predicted;
  int64_t kept = 0;
  forEachEvalBatch(model, set, transform, o, device,
                   [&](const torch::Tensor& out, const torch::Tensor& y, int64_t start, int64_t end) {
                     lossSum += summedLoss(out, y).to(torch::kFloat64) / static_cast<double>(t);
                     const torch::Tensor p = out.to(torch::kFloat64) * std + mean,
                                         a = y.to(torch::kFloat64) * std + mean;
                     const torch::Tensor err = p - a;
                     sums += torch::stack({err.square().sum(0), err.abs().sum(0), a.sum(0), a.square().sum(0)});
                     if (kept < kReportedPoints) {
                       const int64_t take = std::min(kReportedPoints - kept, end - start);
                       actual.push_back(a.slice(0, 0, take));
                       predicted.push_back(p.slice(0, 0, take));
                       kept += take;
                     }
                   });
  torch::Tensor totals = torch::cat({lossSum, sums.reshape({-1})});
  if (o.group) {
    std::vector<torch::Tensor> sum{totals};
    o.group->allReduceSum(sum, "the evaluation's figures");
  }
  // The one sync of an evaluation.
  const torch::Tensor figures = totals.cpu();
  const torch::Tensor points = kept > 0 ? torch::stack({torch::cat(actual), torch::cat(predicted)}).cpu()
                                        : torch::zeros({2, 0, t}, torch::kFloat64);
  const double* f = figures.data_ptr<double>();
  const double count = static_cast<double>(n);
  r.loss = f[0] / count;
  r.rmse = r.mae = r.r2 = 0;
  for (int64_t k = 0; k < t; ++k) {
    const double sse = f[1 + k], sae = f[1 + t + k], sy = f[1 + 2 * t + k], syy = f[1 + 3 * t + k];
    TargetFigures g;
    g.name = names[static_cast<size_t>(k)];
    g.mean = sy / count;
    const double ssTot = std::max(0.0, syy - sy * g.mean);
    g.std = std::sqrt(ssTot / count);
    g.rmse = std::sqrt(sse / count);
    g.mae = sae / count;
    g.r2 = r2Of(sse, ssTot);
    r.rmse += g.rmse / static_cast<double>(t);
    r.mae += g.mae / static_cast<double>(t);
    r.r2 += g.r2 / static_cast<double>(t);
    r.targets.push_back(g);
  }
  const torch::Tensor pts = points.contiguous();
  const double* v = pts.data_ptr<double>();
  const int64_t rows = pts.size(1);
  for (int64_t i = 0; i < rows; ++i) {
    r.actual.emplace_back(v + i * t, v + (i + 1) * t);
    r.predicted.emplace_back(v + (rows + i) * t, v + (rows + i + 1) * t);
  }
  return r;
}

}  // namespace studio
