#include "ui/charts/plot_series.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace studio::ui {

size_t PlotSeries::indexNear(double px) const {
  if (x.empty()) return 0;
  auto it = std::lower_bound(x.begin(), x.end(), px);
  if (it == x.end()) return x.size() - 1;
  const size_t i = static_cast<size_t>(it - x.begin());
  if (i > 0 && px - x[i - 1] < x[i] - px) return i - 1;
  return i;
}

void decimateMinMax(const PlotSeries& s, double lo, double hi, int columns, std::vector<double>& outX,
                    std::vector<double>& outY) {
  outX.clear();
  outY.clear();
  if (s.empty()) return;
  const auto first = std::lower_bound(s.x.begin(), s.x.end(), lo);
  const auto last = std::upper_bound(s.x.begin(), s.x.end(), hi);
  // One sample either side of the range.
  const size_t begin = static_cast<size_t>(first - s.x.begin()) > 0 ? static_cast<size_t>(first - s.x.begin()) - 1 : 0;
  const size_t end = std::min(s.size(), static_cast<size_t>(last - s.x.begin()) + 1);
  if (end <= begin) return;
  columns = std::max(columns, 1);
  const size_t count = end - begin;
  if (count <= static_cast<size_t>(columns) * 4 || !(hi > lo)) {
    outX.assign(s.x.begin() + static_cast<std::ptrdiff_t>(begin), s.x.begin() + static_cast<std::ptrdiff_t>(end));
    outY.assign(s.y.begin() + static_cast<std::ptrdiff_t>(begin), s.y.begin() + static_cast<std::ptrdiff_t>(end));
    return;
  }
  outX.reserve(static_cast<size_t>(columns) * 4 + 2);
  outY.reserve(static_cast<size_t>(columns) * 4 + 2);
  const double width = (hi - lo) / columns;
  auto columnOf = [&](double px) -> long {
    if (px < lo) return -1;       // the sample before the range
    if (px > hi) return columns;  // the sample after it
    return std::min<long>(static_cast<long>((px - lo) / width), columns - 1);
  };
  size_t i = begin;
  while (i < end) {
    const long col = columnOf(s.x[i]);
    size_t firstI = i, lowI = i, highI = i, lastI = i;
    for (++i; i < end && columnOf(s.x[i]) == col; ++i) {
      if (s.y[i] < s.y[lowI] || std::isnan(s.y[lowI])) lowI = i;
      if (s.y[i] > s.y[highI] || std::isnan(s.y[highI])) highI = i;
      lastI = i;
    }
    std::array<size_t, 4> keep{firstI, lowI, highI, lastI};
    std::sort(keep.begin(), keep.end());
    for (size_t k = 0; k < keep.size(); ++k) {
      if (k > 0 && keep[k] == keep[k - 1]) continue;
      outX.push_back(s.x[keep[k]]);
      outY.push_back(s.y[keep[k]]);
    }
  }
}

PlotSeries sampleSteps(int64_t steps, const std::function<double(int64_t)>& value, size_t maxPoints,
                       int64_t maxEvaluations) {
  PlotSeries out;
  if (steps <= 0) return out;
  if (static_cast<size_t>(steps) <= maxPoints) {
    out.x.reserve(static_cast<size_t>(steps));
    out.y.reserve(static_cast<size_t>(steps));
    for (int64_t i = 0; i < steps; ++i) out.append(static_cast<double>(i + 1), value(i));
    return out;
  }
  const int64_t stride = std::max<int64_t>(1, (steps + maxEvaluations - 1) / maxEvaluations);
  const int64_t spans = std::max<int64_t>(1, static_cast<int64_t>(maxPoints / 2) - 1);
  out.x.reserve(maxPoints + 2);
  out.y.reserve(maxPoints + 2);
  for (int64_t k = 0; k < spans; ++k) {
    const int64_t begin = steps * k / spans, end = steps * (k + 1) / spans;  // [begin, end)
    int64_t lo = begin, hi = begin;
    double vlo = value(begin), vhi = vlo;
    for (int64_t i = begin + stride; i < end; i += stride) {
      const double v = value(i);
      if (v < vlo) vlo = v, lo = i;
      if (v > vhi) vhi = v, hi = i;
    }
    const int64_t first = std::min(lo, hi), second = std::max(lo, hi);
    const double vFirst = first == lo ? vlo : vhi, vSecond = first == lo ? vhi : vlo;
    if (k == 0 && first != 0) out.append(1, value(0));
    out.append(static_cast<double>(first + 1), vFirst);
    if (second != first) out.append(static_cast<double>(second + 1), vSecond);
  }
  if (out.x.back() != static_cast<double>(steps)) out.append(static_cast<double>(steps), value(steps - 1));
  return out;
}

}  // namespace studio::ui
