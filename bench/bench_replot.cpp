// Replot cost of a chart holding 1,000,000 points per curve: what a redraw of
// a long run costs the UI thread. Prints milliseconds per replot (min/max
// decimation per pixel column, then QCustomPlot's drawing), following the
// whole run and zoomed into a tenth of it, and QCustomPlot handed every point
// (its own adaptive sampling) for comparison.
// Usage: bench_replot [--points N] [--curves C] [--repeats R]
#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <qcustomplot.h>

#include "ui/charts/metric_chart.h"

namespace {

double msPerReplot(int repeats, const std::function<void()>& replot) {
  replot();  // first paint allocates its buffers
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    QElapsedTimer t;
    t.start();
    replot();
    ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int points = 1'000'000, curves = 3, repeats = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--points")
      points = std::atoi(argv[i + 1]);
    else if (a == "--curves")
      curves = std::atoi(argv[i + 1]);
    else if (a == "--repeats")
      repeats = std::atoi(argv[i + 1]);
  }
  std::mt19937 gen(7);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<studio::ui::PlotSeries> data(static_cast<size_t>(curves));
  for (int c = 0; c < curves; ++c)
    for (int i = 1; i <= points; ++i) data[c].append(i, (1.0 + c) * std::exp(-i / (0.3 * points)) + noise(gen));

  studio::ui::MetricChart chart("Loss", "loss");
  chart.resize(1200, 500);  // one chart of the panel, generously sized
  chart.show();
  QApplication::processEvents();
  for (int c = 0; c < curves; ++c) {
    studio::ui::MetricChart::SeriesStyle s;
    s.pen = QPen(QColor::fromHsv(c * 110, 200, 200), 1.0);
    const QString key = QString("c%1").arg(c);
    chart.addSeries(key, key, s);
    chart.setData(key, data[c]);
  }
  const double follow = msPerReplot(repeats, [&] { chart.refreshNow(); });
  const size_t drawn = chart.drawnPoints();
  chart.plot()->xAxis->setRange(points * 0.45, points * 0.55);  // as a person zooms
  const double zoomed = msPerReplot(repeats, [&] { chart.refreshNow(); });

  // QCustomPlot given every point, its adaptive sampling on.
  QCustomPlot raw;
  raw.resize(1200, 500);
  raw.show();
  for (int c = 0; c < curves; ++c) {
    QVector<QCPGraphData> v;
    v.reserve(points);
    for (int i = 0; i < points; ++i) v.append(QCPGraphData(data[c].x[i], data[c].y[i]));
    raw.addGraph()->data()->set(v, true);
  }
  raw.rescaleAxes();
  const double rawMs = msPerReplot(repeats, [&] { raw.replot(QCustomPlot::rpImmediateRefresh); });

  std::printf("%d curves x %d points, chart 1200x500, median of %d replots\n", curves, points, repeats);
  std::printf("whole run (following):  %.2f ms per replot (%zu points drawn)\n", follow, drawn);
  std::printf("zoomed to 10%%:          %.2f ms per replot\n", zoomed);
  std::printf("QCustomPlot, all points: %.2f ms per replot (its adaptive sampling)\n", rawMs);
  return 0;
}
