#include "studio/label_issues.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace studio {
namespace {

constexpr double kFuzz = 1e-6;                 // probabilities this close count as equal
constexpr double kThresholdFloor = 2 * kFuzz;  // a threshold is never below this
constexpr double kAbsentClassThreshold = 2.0;  // a class nobody is labelled with: nothing is confident in it

size_t at(int64_t i, int64_t k, int64_t classes) { return static_cast<size_t>(i * classes + k); }

// The first largest entry of row i.
int64_t argmaxRow(const std::vector<double>& p, int64_t i, int64_t classes) {
  int64_t best = 0;
  for (int64_t k = 1; k < classes; ++k)
    if (p[at(i, k, classes)] > p[at(i, best, classes)]) best = k;
  return best;
}

}  // namespace

std::vector<int64_t> roundPreservingSum(const std::vector<double>& values) {
  const size_t n = values.size();
  std::vector<double> ints(n);
  // std::nearbyint in the default rounding mode rounds half to even.
  for (size_t i = 0; i < n; ++i) ints[i] = std::nearbyint(values[i]);
  const double target = std::nearbyint(std::accumulate(values.begin(), values.end(), 0.0));
  double sum = std::nearbyint(std::accumulate(ints.begin(), ints.end(), 0.0));
  while (std::abs(sum - target) > kFuzz) {
    const double diff = std::nearbyint(target - sum);
    const int step = diff < 0 ? -1 : 1;
    const size_t changes = std::min(static_cast<size_t>(std::abs(diff)), n);
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    // Ascending by what rounding took away; raising starts from the most lost.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return values[a] - ints[a] < values[b] - ints[b]; });
    if (step > 0) std::reverse(order.begin(), order.end());
    for (size_t c = 0; c < changes; ++c) ints[order[c]] += step;
    sum = std::nearbyint(std::accumulate(ints.begin(), ints.end(), 0.0));
  }
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(ints[i]);
  return out;
}

LabelIssues findLabelIssues(const std::vector<int64_t>& labels, const std::vector<double>& probs, int64_t classes) {
  const auto n = static_cast<int64_t>(labels.size());
  if (classes < 2) throw std::invalid_argument("label issues need at least 2 classes");
  if (static_cast<int64_t>(probs.size()) != n * classes)
    throw std::invalid_argument("label issues: " + std::to_string(probs.size()) + " probabilities for " +
                                std::to_string(n) + " examples of " + std::to_string(classes) + " classes");
  for (int64_t l : labels)
    if (l < 0 || l >= classes)
      throw std::invalid_argument("label issues: label " + std::to_string(l) + " out of range");
  const auto K = static_cast<size_t>(classes);
  LabelIssues out;

  // Per-class thresholds: the mean self-confidence of each given class.
  std::vector<int64_t> counts(K, 0);
  std::vector<double> selfSum(K, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(labels[static_cast<size_t>(i)]);
    ++counts[k];
    selfSum[k] += probs[at(i, static_cast<int64_t>(k), classes)];
  }
  out.thresholds.resize(K);
  for (size_t k = 0; k < K; ++k)
    out.thresholds[k] =
        std::max(counts[k] ? selfSum[k] / static_cast<double>(counts[k]) : kAbsentClassThreshold, kThresholdFloor);

  // The confident joint: each example that is confidently some class counts
  // under (given, that class); with several, the most probable one.
  std::vector<std::vector<double>> joint(K, std::vector<double>(K, 0.0));
  for (int64_t i = 0; i < n; ++i) {
    int64_t confident = 0, only = -1;
    for (int64_t k = 0; k < classes; ++k)
      if (probs[at(i, k, classes)] >= out.thresholds[static_cast<size_t>(k)] - kFuzz) {
        ++confident;
        if (only < 0) only = k;
      }
    if (confident == 0) continue;
    const int64_t guess = confident > 1 ? argmaxRow(probs, i, classes) : only;
    joint[static_cast<size_t>(labels[static_cast<size_t>(i)])][static_cast<size_t>(guess)] += 1;
  }
  for (size_t k = 0; k < K; ++k) joint[k][k] = std::max(joint[k][k], 1.0);

  // Calibration: each row sums to its class's count, the whole to n.
  double total = 0;
  for (size_t g = 0; g < K; ++g) {
    const double row = std::max(std::accumulate(joint[g].begin(), joint[g].end(), 0.0), 1e-100);
    for (size_t t = 0; t < K; ++t) {
      joint[g][t] = joint[g][t] / row * static_cast<double>(counts[g]);
      total += joint[g][t];
    }
  }
  total = std::max(total, 1e-100);
  out.confidentJoint.resize(K);
  for (size_t g = 0; g < K; ++g) {
    for (size_t t = 0; t < K; ++t) joint[g][t] = joint[g][t] / total * static_cast<double>(n);
    out.confidentJoint[g] = roundPreservingSum(joint[g]);
  }

  // How many to prune, [true][given]: the joint's counts, leaving at least
  // one example in each given class (what a diagonal is raised by comes off
  // the column's other non-zero counts evenly), whole examples only.
  std::vector<std::vector<int64_t>> prune(K, std::vector<int64_t>(K, 0));
  for (size_t g = 0; g < K; ++g) {
    const int64_t diagonal = out.confidentJoint[g][g];
    const int64_t raised = std::max<int64_t>(diagonal, 1);
    int64_t nonzero = 0;
    for (size_t t = 0; t < K; ++t) nonzero += out.confidentJoint[g][t] != 0;
    const double share = static_cast<double>(raised - diagonal) / std::max<double>(static_cast<double>(nonzero) - 1, 1);
    for (size_t t = 0; t < K; ++t) {
      const double v = std::max(static_cast<double>(out.confidentJoint[g][t]) - share, 0.0);
      prune[t][g] = t == g ? raised : static_cast<int64_t>(v);  // truncated, as counts of whole examples
    }
  }

  // Prune by noise rate: in each given class, for each other class t, the
  // prune[t][given] examples with the largest margin p(t) - p(given).
  std::vector<char> flagged(static_cast<size_t>(n), 0);
  std::vector<std::vector<int64_t>> members(K);
  for (int64_t i = 0; i < n; ++i) members[static_cast<size_t>(labels[static_cast<size_t>(i)])].push_back(i);
  for (size_t g = 0; g < K; ++g) {
    const auto& idx = members[g];
    if (idx.size() <= 1) continue;  // a class of one keeps it
    for (size_t t = 0; t < K; ++t) {
      const int64_t count = prune[t][g];
      if (t == g || count <= 0) continue;
      std::vector<size_t> order(idx.size());
      std::iota(order.begin(), order.end(), size_t{0});
      auto margin = [&](size_t m) {
        return probs[at(idx[m], static_cast<int64_t>(t), classes)] -
               probs[at(idx[m], static_cast<int64_t>(g), classes)];
      };
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return margin(a) > margin(b); });
      for (size_t m = 0; m < std::min(order.size(), static_cast<size_t>(count)); ++m)
        flagged[static_cast<size_t>(idx[order[m]])] = 1;
    }
  }

  for (int64_t i = 0; i < n; ++i) {
    if (!flagged[static_cast<size_t>(i)]) continue;
    const int64_t given = labels[static_cast<size_t>(i)];
    // Kept when the model's own prediction is the given label (within the fuzz).
    int64_t best = 0;
    double bestP = -1;
    for (int64_t k = 0; k < classes; ++k) {
      const double p = probs[at(i, k, classes)] + (k == given ? kFuzz : 0.0);
      if (p > bestP) {
        bestP = p;
        best = k;
      }
    }
    if (best == given) continue;
    out.issues.push_back({i, given, argmaxRow(probs, i, classes), probs[at(i, given, classes)]});
  }
  std::stable_sort(out.issues.begin(), out.issues.end(),
                   [](const LabelIssue& a, const LabelIssue& b) { return a.selfConfidence < b.selfConfidence; });
  return out;
}

}  // namespace studio
