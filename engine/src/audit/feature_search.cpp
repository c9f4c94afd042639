#include "audit/feature_search.h"

#include <algorithm>
#include <map>

#include <torch/cuda.h>
#include <torch/torch.h>

namespace studio {
namespace {

constexpr int64_t kBlockValues = 32 << 20;  // similarities per block: 128 MiB of float32

torch::Device searchDevice() { return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::kCPU; }

// Unit rows on the device (a zero row stays zero).
torch::Tensor unitRows(const std::vector<float>& v, int64_t dim, const torch::Device& device) {
  const int64_t n = dim > 0 ? static_cast<int64_t>(v.size()) / dim : 0;
  torch::Tensor t = torch::from_blob(const_cast<float*>(v.data()), {n, dim}, torch::kFloat32).to(device);
  return t / t.norm(2, {1}, /*keepdim=*/true).clamp_min(1e-12);  // F.normalize's eps
}

int64_t blockRows(int64_t columns) { return std::max<int64_t>(1, kBlockValues / std::max<int64_t>(columns, 1)); }

}  // namespace

std::vector<SimilarPair> similarPairs(const std::vector<float>& a, const std::vector<float>& b, int64_t dim,
                                      double threshold, bool sameSet, std::vector<SimilarPair>* nearest) {
  std::vector<SimilarPair> out;
  if (dim <= 0 || a.empty() || b.empty()) return out;
  const bool findNearest = nearest && !(sameSet && b.size() <= static_cast<size_t>(dim));
  torch::NoGradGuard noGrad;
  const torch::Device device = searchDevice();
  const torch::Tensor A = unitRows(a, dim, device), B = unitRows(b, dim, device);
  const int64_t n = A.size(0), rows = blockRows(B.size(0));
  for (int64_t start = 0; start < n; start += rows) {
    const int64_t len = std::min(rows, n - start);
    torch::Tensor sims = torch::mm(A.narrow(0, start, len), B.t());
    if (findNearest) {
      torch::Tensor others = sims;
      if (sameSet)  // not itself: its own similarity below every other
        others = sims.scatter(
            1,
            torch::arange(start, start + len, torch::TensorOptions().dtype(torch::kLong).device(device)).unsqueeze(1),
            -3.0);
      const auto [best, at] = others.max(1);
      const torch::Tensor values = best.to(torch::kCPU, torch::kFloat64), index = at.to(torch::kCPU);
      const auto* v = values.data_ptr<double>();
      const auto* k = index.data_ptr<int64_t>();
      for (int64_t i = 0; i < len; ++i) nearest->push_back({start + i, k[i], v[i]});
    }
    torch::Tensor hit = sims.ge(threshold);
    if (sameSet)  // each unordered pair once, never an example with itself
      hit = hit.logical_and(torch::arange(B.size(0), hit.options().dtype(torch::kLong))
                                .unsqueeze(0)
                                .gt(torch::arange(start, start + len, hit.options().dtype(torch::kLong)).unsqueeze(1)));
    const torch::Tensor at = hit.nonzero().to(torch::kCPU).contiguous();  // [hits, 2]
    const torch::Tensor values = sims.index({hit}).to(torch::kCPU, torch::kFloat64);
    const auto* idx = at.data_ptr<int64_t>();
    const auto* val = values.data_ptr<double>();
    for (int64_t i = 0; i < at.size(0); ++i) out.push_back({start + idx[2 * i], idx[2 * i + 1], val[i]});
  }
  std::sort(out.begin(), out.end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.similarity > y.similarity || (x.similarity == y.similarity && x.first < y.first);
  });
  return out;
}

std::vector<double> outlierScores(const std::vector<float>& features, int64_t dim, const std::vector<int64_t>& labels,
                                  int64_t k) {
  std::vector<double> score(labels.size(), 0.0);
  if (dim <= 0 || labels.empty() || k <= 0) return score;
  torch::NoGradGuard noGrad;
  const torch::Device device = searchDevice();
  const torch::Tensor all = unitRows(features, dim, device);
  std::map<int64_t, std::vector<int64_t>> members;
  for (size_t i = 0; i < labels.size(); ++i) members[labels[i]].push_back(static_cast<int64_t>(i));
  for (const auto& [label, idx] : members) {
    const auto n = static_cast<int64_t>(idx.size());
    const int64_t kk = std::min(k, n - 1);
    if (kk <= 0) continue;
    const torch::Tensor at = torch::tensor(idx, torch::kLong).to(device);
    const torch::Tensor X = all.index_select(0, at);
    const int64_t rows = blockRows(n);
    for (int64_t start = 0; start < n; start += rows) {
      const int64_t len = std::min(rows, n - start);
      torch::Tensor sims = torch::mm(X.narrow(0, start, len), X.t());
      // Not itself: its own similarity is pushed below every other.
      sims.scatter_(
          1, torch::arange(start, start + len, torch::TensorOptions().dtype(torch::kLong).device(device)).unsqueeze(1),
          -3.0);
      const torch::Tensor mean = (1 - std::get<0>(sims.topk(kk, 1))).mean(1).to(torch::kCPU, torch::kFloat64);
      const auto* m = mean.data_ptr<double>();
      for (int64_t i = 0; i < len; ++i) score[static_cast<size_t>(idx[static_cast<size_t>(start + i)])] = m[i];
    }
  }
  return score;
}

}  // namespace studio
