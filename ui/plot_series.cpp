#include "ui/plot_series.h"

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
    if (px < lo) return -1;        // the sample before the range
    if (px > hi) return columns;   // the sample after it
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

}  // namespace studio::ui
