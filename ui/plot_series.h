#pragma once
// One curve's samples, kept whole for the life of the curve, and the min/max
// decimation that draws it: drawing never drops a sample's extremes, so a
// spike stays visible at every zoom level. Widget-free (tested on its own).
// Thread: plain data, the UI thread.

#include <cstddef>
#include <vector>

namespace studio::ui {

struct PlotSeries {
  std::vector<double> x;  // ascending (optimizer steps)
  std::vector<double> y;

  void append(double px, double py) {
    x.push_back(px);
    y.push_back(py);
  }
  size_t size() const { return x.size(); }
  bool empty() const { return x.empty(); }
  void clear() {
    x.clear();
    y.clear();
  }
  // Drops the samples after px (x ascending).
  void dropAfter(double px) {
    size_t n = x.size();
    while (n > 0 && x[n - 1] > px) --n;
    x.resize(n);
    y.resize(n);
  }
  // Index of the sample nearest to px (x ascending); size() when empty.
  size_t indexNear(double px) const;
};

// The samples to draw for the x range [lo, hi] at `columns` pixel columns.
// Within the range each column keeps its first, lowest, highest and last
// sample, in their order, so the line through them has the same extremes and
// joins as the line through every sample. One sample beyond each end keeps
// the line running to the edges. When the range holds no more samples than
// four per column they are all returned unchanged.
void decimateMinMax(const PlotSeries& series, double lo, double hi, int columns, std::vector<double>& outX,
                    std::vector<double>& outY);

}  // namespace studio::ui
