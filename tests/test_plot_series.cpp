// Min/max decimation for drawing, and the debiased loss smoothing.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "ui/charts/loss_smoother.h"
#include "ui/charts/plot_series.h"

using studio::ui::decimateMinMax;
using studio::ui::LossSmoother;
using studio::ui::PlotSeries;
using studio::ui::sampleSteps;

namespace {

PlotSeries noisy(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0.0, 0.1);
  PlotSeries s;
  for (size_t i = 0; i < n; ++i)
    s.append(static_cast<double>(i + 1), 2.0 * std::exp(-double(i) / double(n)) + noise(gen));
  return s;
}

}  // namespace

class TestPlotSeries : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void fewPointsAreReturnedUnchanged() {
    PlotSeries s = noisy(100, 1);
    std::vector<double> x, y;
    decimateMinMax(s, 1, 100, 50, x, y);
    QCOMPARE(x, s.x);
    QCOMPARE(y, s.y);
  }

  void spikeSurvivesAMillionPoints() {
    PlotSeries s = noisy(1'000'000, 2);
    s.y[777'777] = 50.0;  // one divergent step
    s.y[123'456] = -7.0;
    std::vector<double> x, y;
    decimateMinMax(s, s.x.front(), s.x.back(), 800, x, y);
    QVERIFY2(x.size() <= 4 * 800 + 2, qPrintable(QString::number(x.size())));
    QCOMPARE(*std::max_element(y.begin(), y.end()), 50.0);
    QCOMPARE(*std::min_element(y.begin(), y.end()), -7.0);
    // Every drawn point is a real sample, in order.
    QVERIFY(std::is_sorted(x.begin(), x.end()));
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t j = static_cast<size_t>(x[i]) - 1;
      QCOMPARE(s.x[j], x[i]);
      QCOMPARE(s.y[j], y[i]);
    }
  }

  void everyColumnKeepsItsExtremes() {
    PlotSeries s = noisy(100'000, 3);
    const double lo = 10'000, hi = 60'000;
    const int columns = 500;
    std::vector<double> x, y;
    decimateMinMax(s, lo, hi, columns, x, y);
    const double width = (hi - lo) / columns;
    std::vector<double> rawMin(columns, 1e300), rawMax(columns, -1e300), outMin(columns, 1e300),
        outMax(columns, -1e300);
    auto column = [&](double px) { return std::min(columns - 1, static_cast<int>((px - lo) / width)); };
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.x[i] < lo || s.x[i] > hi) continue;
      rawMin[column(s.x[i])] = std::min(rawMin[column(s.x[i])], s.y[i]);
      rawMax[column(s.x[i])] = std::max(rawMax[column(s.x[i])], s.y[i]);
    }
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] < lo || x[i] > hi) continue;
      outMin[column(x[i])] = std::min(outMin[column(x[i])], y[i]);
      outMax[column(x[i])] = std::max(outMax[column(x[i])], y[i]);
    }
    QCOMPARE(outMin, rawMin);
    QCOMPARE(outMax, rawMax);
    // One sample beyond each end, so the line reaches the edges.
    QCOMPARE(x.front(), lo - 1);
    QCOMPARE(x.back(), hi + 1);
  }

  void zoomedInRangeIsExact() {
    PlotSeries s = noisy(1'000'000, 4);
    std::vector<double> x, y;
    decimateMinMax(s, 500'000, 501'000, 1200, x, y);
    QCOMPARE(x.size(), size_t{1001 + 2});
    QCOMPARE(x.front(), 499'999.0);
    QCOMPARE(y[1], s.y[499'999]);
  }

  void shortPlansKeepEveryStep() {
    const PlotSeries s = sampleSteps(1000, [](int64_t i) { return 0.5 * static_cast<double>(i); });
    QCOMPARE(s.size(), size_t{1000});
    QCOMPARE(s.x.front(), 1.0);
    QCOMPARE(s.y[999], 499.5);
  }

  void longPlansKeepEachSpansExtremes() {
    // A plan of 50 million steps (a run set to 100,000 epochs) must not become
    // 50 million points redrawn at every tick. A step decay every 7,777,777
    // steps and a one-step spike keep their jumps in the sampled curve.
    const int64_t steps = 50'000'000;
    auto lr = [](int64_t i) { return i == 12'345'678 ? 5.0 : std::pow(0.5, static_cast<double>(i / 7'777'777)); };
    int64_t calls = 0;
    const PlotSeries s = sampleSteps(
        steps,
        [&](int64_t i) {
          ++calls;
          return lr(i);
        },
        10000, 50'000'000);
    QVERIFY(s.size() <= 10002);
    QVERIFY(calls <= steps + 10001);
    QCOMPARE(s.x.front(), 1.0);
    QCOMPARE(s.x.back(), static_cast<double>(steps));
    QVERIFY(std::is_sorted(s.x.begin(), s.x.end()));
    // Each sample is the plan's value at its step.
    for (size_t i = 0; i < s.size(); ++i) QCOMPARE(s.y[i], lr(static_cast<int64_t>(s.x[i]) - 1));
    // The spike and every level of the decay are there.
    QCOMPARE(*std::max_element(s.y.begin(), s.y.end()), 5.0);
    for (int level = 0; level <= 6; ++level)
      QVERIFY2(std::count(s.y.begin(), s.y.end(), std::pow(0.5, level)) > 0, qPrintable(QString::number(level)));
    // With fewer evaluations allowed, the steps evaluated are evenly spaced.
    calls = 0;
    const PlotSeries coarse = sampleSteps(
        steps,
        [&](int64_t i) {
          ++calls;
          return lr(i);
        },
        10000, 1'000'000);
    QVERIFY(calls <= 1'000'000 + 2 * 10000);
    QCOMPARE(coarse.x.back(), static_cast<double>(steps));
  }

  void indexNearFindsTheClosestStep() {
    PlotSeries s;
    for (double v : {10.0, 20.0, 40.0}) s.append(v, v);
    QCOMPARE(s.indexNear(0), size_t{0});
    QCOMPARE(s.indexNear(14), size_t{0});
    QCOMPARE(s.indexNear(16), size_t{1});
    QCOMPARE(s.indexNear(31), size_t{2});
    QCOMPARE(s.indexNear(99), size_t{2});
  }

  void smoothingIsDebiased_data() {
    QTest::addColumn<double>("weight");
    QTest::newRow("none") << 0.0;
    QTest::newRow("0.6") << 0.6;
    QTest::newRow("0.99") << 0.99;
  }
  void smoothingIsDebiased() {
    QFETCH(double, weight);
    const std::vector<double> xs = {2.3, 2.1, 1.7, 1.9, 1.2, 0.9, 1.1};
    LossSmoother smoother(weight);
    for (size_t t = 0; t < xs.size(); ++t) {
      // Weighted mean of the samples so far, weights w^(t-i), normalised.
      double num = 0, den = 0;
      for (size_t i = 0; i <= t; ++i) {
        num += std::pow(weight, double(t - i)) * xs[i];
        den += std::pow(weight, double(t - i));
      }
      QVERIFY(std::abs(smoother.add(xs[t]) - num / den) < 1e-12);
    }
    // The first value is the first sample, not pulled toward zero.
    LossSmoother fresh(weight);
    QCOMPARE(fresh.add(2.3), 2.3);
  }

  void nonFiniteSamplesArePassedOver() {
    LossSmoother s(0.5);
    s.add(1.0);
    const double before = s.add(3.0);
    QCOMPARE(s.add(std::nan("")), before);
    QCOMPARE(s.add(std::numeric_limits<double>::infinity()), before);
  }
};

QTEST_APPLESS_MAIN(TestPlotSeries)
#include "test_plot_series.moc"
