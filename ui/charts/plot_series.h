#pragma once
// One curve's samples, kept whole for the life of the curve, and the min/max
// decimation that draws it: drawing never drops a sample's extremes, so a
// spike stays visible at every zoom level. Widget-free (tested on its own).
// Thread: plain data, the UI thread.

#include <cstddef>
#include <cstdint>
#include <functional>
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

// A planned curve over optimizer steps 1..steps (value(i) at step i + 1),
// kept small enough to redraw at every tick of a long run: up to maxPoints
// every step is a sample; beyond, the steps are cut into maxPoints / 2 equal
// spans, each giving its lowest and highest value at their steps (first and
// last step always kept). A plan of millions of steps costs at most
// maxEvaluations calls of value (evenly spaced steps past that).
PlotSeries sampleSteps(int64_t steps, const std::function<double(int64_t)>& value, size_t maxPoints = 100000,
                       int64_t maxEvaluations = 4000000);

}  // namespace studio::ui
