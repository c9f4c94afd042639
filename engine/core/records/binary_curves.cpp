#include "studio/binary_curves.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace studio {
namespace {

constexpr double kNoFigure = std::numeric_limits<double>::quiet_NaN();

// At most n points of a curve, evenly spaced along it, its ends kept.
std::vector<std::pair<double, double>> thinned(const std::vector<std::pair<double, double>>& c, size_t n) {
  if (c.size() <= n) return c;
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < n; ++i) out.push_back(c[i * (c.size() - 1) / (n - 1)]);
  return out;
}

}  // namespace

BinaryCurves binaryCurves(const std::vector<float>& scores, const std::vector<uint8_t>& truth) {
  BinaryCurves r;
  const size_t n = std::min(scores.size(), truth.size());
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  for (size_t i = 0; i < n; ++i) (truth[i] ? r.positives : r.negatives) += 1;
  const auto pos = static_cast<double>(r.positives), neg = static_cast<double>(r.negatives);
  std::vector<std::pair<double, double>> roc{{0.0, 0.0}}, pr;
  double tp = 0, fp = 0, lastRecall = 0, ap = 0, auc = 0;
  for (size_t i = 0; i < n; ++i) {
    (truth[order[i]] ? tp : fp) += 1;
    // A threshold is each distinct score: the examples tied with it count at once.
    if (i + 1 < n && scores[order[i + 1]] == scores[order[i]]) continue;
    const double threshold = scores[order[i]];
    const double fpr = neg > 0 ? fp / neg : kNoFigure, tpr = pos > 0 ? tp / pos : kNoFigure;
    auc += (fpr - roc.back().first) * (tpr + roc.back().second) / 2;
    roc.emplace_back(fpr, tpr);
    const double precision = tp / (tp + fp), recall = pos > 0 ? tp / pos : kNoFigure;
    pr.emplace_back(recall, precision);
    ap += (recall - lastRecall) * precision;
    lastRecall = recall;
    const double f1 = tp > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
    if (f1 > r.bestF1) {
      r.bestF1 = f1;
      r.bestThreshold = threshold;
    }
  }
  r.rocAuc = pos > 0 && neg > 0 ? auc : kNoFigure;
  r.averagePrecision = pos > 0 ? ap : kNoFigure;
  if (pos > 0 && neg > 0) r.roc = thinned(roc, kCurvePoints);
  if (pos > 0) r.pr = thinned(pr, kCurvePoints);
  return r;
}

}  // namespace studio
