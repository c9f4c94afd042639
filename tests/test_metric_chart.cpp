// The chart: a million points draw as min/max per pixel column with the spike
// kept; zooming re-decimates exactly; log scale, markers, reset view.
#include <QCheckBox>
#include <QComboBox>
#include <QtTest/QtTest>

#include <cmath>
#include <ctime>
#include <optional>

#include <qcustomplot.h>

#include "test_support.h"
#include "ui/charts/divergence_watch.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/charts/system_monitor.h"

using studio::ui::MetricChart;
using studio::ui::PlotSeries;
using namespace studio;

class TestMetricChart : public QObject {
  Q_OBJECT

  // A training record: the step, its loss and learning rate.
  static MetricRecord trainRecord(int64_t step, double loss, double lr) {
    MetricRecord r;
    r.step = step;
    r.trainLoss = loss;
    r.lr = lr;
    return r;
  }

  MetricChart::SeriesStyle plain() {
    MetricChart::SeriesStyle s;
    s.pen = QPen(Qt::blue);
    return s;
  }

 private Q_SLOTS:
  void millionPointsDrawPerColumn() {
    MetricChart chart("Loss", "loss");
    chart.resize(1000, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.addSeries("run/loss", "train", plain());
    PlotSeries data;
    for (int i = 1; i <= 1'000'000; ++i) data.append(i, 1.0 + 0.5 * std::sin(i * 0.001));
    data.y[654'321] = 40.0;
    chart.setData("run/loss", data);
    chart.refreshNow();
    QCPGraph* g = chart.plot()->graph(0);
    const int columns = chart.plot()->axisRect()->width();
    QVERIFY(columns > 100);
    QVERIFY2(g->dataCount() <= 4 * std::max(64, columns) + 2, qPrintable(QString::number(g->dataCount())));
    bool found = false;
    QCOMPARE(g->getValueRange(found).upper, 40.0);
    // Following: the whole run is in view, with 2 % of its span to spare at
    // each end (a point at either end is drawn whole), and the value axis
    // covers the spike.
    const double pad = 0.02 * (1'000'000.0 - 1.0);
    QCOMPARE(chart.plot()->xAxis->range().lower, 1.0 - pad);
    QCOMPARE(chart.plot()->xAxis->range().upper, 1'000'000.0 + pad);
    QVERIFY(chart.plot()->yAxis->range().upper >= 40.0);
    QCOMPARE(chart.series("run/loss")->size(), size_t{1'000'000});
  }

  void zoomingRedrawsEverySampleInRange() {
    MetricChart chart("Loss", "loss");
    chart.resize(800, 300);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.addSeries("k", "train", plain());
    for (int i = 1; i <= 200'000; ++i) chart.append("k", i, std::cos(i * 0.01));
    chart.refreshNow();
    // A person zooms: the chart stops following and draws the range exactly.
    QTest::mousePress(chart.plot(), Qt::LeftButton, {}, QPoint(400, 150));
    QTest::mouseRelease(chart.plot(), Qt::LeftButton, {}, QPoint(400, 150));
    QVERIFY(!chart.following());
    chart.plot()->xAxis->setRange(1000, 1100);
    QCOMPARE(chart.plot()->graph(0)->dataCount(), 101 + 2);
    // New data does not move the person's view.
    chart.append("k", 200'001, 5.0);
    chart.refreshNow();
    QCOMPARE(chart.plot()->xAxis->range().lower, 1000.0);
    chart.resetView();
    QVERIFY(chart.following());
    QCOMPARE(chart.plot()->xAxis->range().upper, 200'001.0 + 0.02 * 200'000.0);
  }

  void logScaleAndMarkers() {
    MetricChart chart("Learning rate", "lr");
    chart.addSeries("k", "lr", plain());
    for (int i = 1; i <= 100; ++i) chart.append("k", i, std::pow(10.0, -i / 20.0));
    chart.setLogScale(true);
    QCOMPARE(chart.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    chart.setLogScale(false);
    QCOMPARE(chart.plot()->yAxis->scaleType(), QCPAxis::stLinear);
    chart.addMarker(50, "lr → 0.01");
    QCOMPARE(chart.markerCount(), 1);
    // Non-finite values are never stored (a NaN loss would break the line).
    chart.append("k", 101, std::nan(""));
    QCOMPARE(chart.series("k")->size(), size_t{100});
    chart.clear();
    QCOMPARE(chart.markerCount(), 0);
    QVERIFY(chart.seriesKeys().empty());
    QCOMPARE(chart.plot()->graphCount(), 0);
  }

  void followsTheApplicationPalette() {
    MetricChart chart("Loss", "loss");
    chart.resize(400, 300);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QPalette before = QApplication::palette();
    QPalette dark = before;
    dark.setColor(QPalette::Base, QColor(30, 30, 32));
    dark.setColor(QPalette::WindowText, QColor(225, 225, 225));
    QApplication::setPalette(dark);
    QTRY_COMPARE(chart.plot()->grab().toImage().pixelColor(3, 3), QColor(30, 30, 32));
    QCOMPARE(chart.plot()->xAxis->tickLabelColor(), QColor(225, 225, 225));
    QApplication::setPalette(before);
    QTRY_COMPARE(chart.plot()->grab().toImage().pixelColor(3, 3), before.color(QPalette::Base));
  }

  void savesPngAndPdf() {
    MetricChart chart("Accuracy", "accuracy");
    chart.addSeries("k", "eval", plain());
    for (int i = 1; i <= 10; ++i) chart.append("k", i * 100, 0.5 + i * 0.04);
    QTemporaryDir dir;
    QVERIFY(chart.savePng(dir.filePath("a.png"), 600, 300));
    QVERIFY(chart.savePdf(dir.filePath("a.pdf"), 600, 300));
    QImage png(dir.filePath("a.png"));
    QCOMPARE(png.size(), QSize(600, 300));
    QFile pdf(dir.filePath("a.pdf"));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
  }

  void rollbackDropsTheStepsAfterItsCheckpoint() {
    ui::PlotsPanel panel;
    panel.beginRun("run", "run");
    std::vector<MetricRecord> records;
    for (int step = 1; step <= 10; ++step) {
      MetricRecord r;
      r.step = step;
      r.trainLoss = 1.0 / step;
      r.lr = 0.1;
      records.push_back(r);
    }
    MetricRecord bad;
    bad.kind = RecordKind::NonFinite;
    bad.step = 9;
    records.push_back(bad);
    panel.appendRecords("run", records);
    MetricRecord back;
    back.kind = RecordKind::Rollback;
    back.step = 5;
    back.lr = 0.05;
    std::vector<MetricRecord> after{back};
    for (int step = 6; step <= 7; ++step) {
      MetricRecord r;
      r.step = step;
      r.trainLoss = 0.5;
      r.lr = 0.05;
      after.push_back(r);
    }
    panel.appendRecords("run", after);
    const ui::PlotSeries* loss = panel.chart(ui::PlotsPanel::Loss)->series("run/train_loss");
    QCOMPARE(loss->x, (std::vector<double>{1, 2, 3, 4, 5, 6, 7}));
    QCOMPARE(loss->y.back(), 0.5);
    QCOMPARE(panel.chart(ui::PlotsPanel::Loss)->series("run/train_loss_smooth")->size(), size_t(7));
    QCOMPARE(panel.chart(ui::PlotsPanel::LearningRate)->series("run/lr")->y.back(), 0.05);
    QCOMPARE(panel.chart(ui::PlotsPanel::Loss)->markerCount(), 2);  // "not finite" and the rollback
  }

  // Issue 9 (chart basics): the charts are linked. The mouse over one shows
  // the read-out at that step in every chart; zooming or panning one's steps
  // shows the same steps in all, a double-click resets all; unlinked, each
  // chart is on its own.
  void linkedChartsZoomAndReadOutTogether() {
    ui::PlotsPanel panel;
    panel.resize(1200, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.beginRun("run", "run");
    std::vector<MetricRecord> records;
    for (int step = 1; step <= 400; ++step) {
      MetricRecord r = trainRecord(step, 2.0 / std::sqrt(step), 0.1);
      r.samplesPerSecond = 1000 + step;
      r.memAllocatedMiB = 300;
      r.gradNorm = 1.0;
      records.push_back(r);
    }
    panel.appendRecords("run", records);
    for (MetricChart* c : panel.charts()) c->refreshNow();
    MetricChart* loss = panel.chart(ui::PlotsPanel::Loss);
    MetricChart* lr = panel.chart(ui::PlotsPanel::LearningRate);
    MetricChart* speed = panel.chart(ui::PlotsPanel::Throughput);
    QCustomPlot* plot = loss->plot();
    const auto hover = [plot](QPoint at) {
      QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(plot->mapToGlobal(at)), Qt::NoButton, Qt::NoButton,
                       Qt::NoModifier);
      QApplication::sendEvent(plot, &move);
    };
    const QPoint centre = plot->axisRect()->rect().center();
    hover(centre);
    QVERIFY(loss->crosshairShown());
    QVERIFY(lr->crosshairShown());
    QVERIFY(speed->crosshairShown());
    // The same step in each read-out.
    const int step = static_cast<int>(std::lround(plot->xAxis->pixelToCoord(centre.x())));
    const QString at = QStringLiteral("(step %1)").arg(step);
    for (MetricChart* c : {loss, speed}) {
      QString text;
      for (int i = 0; i < c->plot()->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(c->plot()->item(i)); t && t->visible()) text += t->text();
      QVERIFY2(text.contains(at), qPrintable(text + " lacks " + at));
    }
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(plot, &leave);
    QVERIFY(!loss->crosshairShown());
    QVERIFY(!lr->crosshairShown());

    // The person zooms the loss chart's steps (as a wheel or drag does, by
    // setting its range): every chart shows steps 100-150 and stops following.
    plot->xAxis->setRange(100, 150);
    for (MetricChart* c : panel.charts()) {
      QCOMPARE(c->stepRangeLower(), 100.0);
      QCOMPARE(c->stepRangeUpper(), 150.0);
      QVERIFY(!c->following());
    }
    // What the speed chart draws is its own data in that range.
    bool found = false;
    const QCPRange drawn = speed->plot()->graph(0)->getKeyRange(found);
    QVERIFY(found && drawn.lower >= 99 && drawn.upper <= 151);
    // A double-click resets every chart.
    QTest::mouseDClick(plot, Qt::LeftButton, {}, centre);
    for (MetricChart* c : panel.charts()) QVERIFY(c->following());
    QCOMPARE(speed->stepRangeUpper(), 400.0 + 0.02 * 399.0);

    // Unlinked: a zoom and the read-out stay in their chart.
    auto* link = panel.findChild<QCheckBox*>("linkCharts");
    QVERIFY(link && link->isChecked());
    link->setChecked(false);
    plot->xAxis->setRange(10, 20);
    QVERIFY(speed->following());
    QCOMPARE(speed->stepRangeUpper(), 400.0 + 0.02 * 399.0);
    hover(centre);
    QVERIFY(loss->crosshairShown());
    QVERIFY(!speed->crosshairShown());
  }

  // Issue 9 (chart basics): smoothing per chart, from its right-click menu.
  // A chart draws its curves as TensorBoard's bias-corrected moving average
  // (s_t = w s_{t-1} + (1 - w) x_t, shown as s_t / (1 - w^t)); the data keep
  // their values, dots (evaluations) and the plan are never smoothed, and the
  // loss chart's choice is the panel's loss smoothing (its raw curve stays).
  void smoothingPerChart() {
    ui::PlotsPanel panel;
    std::vector<MetricRecord> records;
    for (int step = 1; step <= 50; ++step) {
      MetricRecord r = trainRecord(step, 1.0, 0.1);
      r.samplesPerSecond = step % 2 ? 1000.0 : 3000.0;
      records.push_back(r);
      if (step % 10 == 0) {
        MetricRecord e;
        e.kind = RecordKind::Eval;
        e.step = step;
        e.evalAccuracy = step % 20 ? 0.5 : 0.9;
        records.push_back(e);
      }
    }
    panel.beginRun("a", "a");
    panel.appendRecords("a", records);
    MetricChart* speed = panel.chart(ui::PlotsPanel::Throughput);
    QCOMPARE(speed->smoothing(), 0.0);
    Q_EMIT speed->smoothingRequested(0.9);  // as the menu's "0.9"
    QCOMPARE(speed->smoothing(), 0.9);
    const ui::PlotSeries* shown = speed->shownSeries("a/samples_per_s");
    const ui::PlotSeries* data = speed->series("a/samples_per_s");
    QCOMPARE(shown->size(), size_t{50});
    double ema = 0, debias = 1;
    for (size_t i = 0; i < data->size(); ++i) {
      ema = 0.9 * ema + 0.1 * data->y[i];
      debias *= 0.9;
      QVERIFY(std::abs(shown->y[i] - ema / (1 - debias)) < 1e-9);
    }
    QCOMPARE(shown->y.front(), 1000.0);  // bias-corrected: the first point is the first sample
    QVERIFY(std::abs(shown->y.back() - 2000.0) < 150);
    QCOMPARE(data->y[1], 3000.0);  // the data as recorded
    // New samples are smoothed as they arrive.
    MetricRecord more = records.front();
    more.step = 51;
    panel.appendRecords("a", {more});
    ema = 0.9 * ema + 0.1 * 1000.0;
    debias *= 0.9;
    QVERIFY(std::abs(speed->shownSeries("a/samples_per_s")->y.back() - ema / (1 - debias)) < 1e-9);
    // Dots are never smoothed.
    MetricChart* accuracy = panel.chart(ui::PlotsPanel::Accuracy);
    accuracy->setSmoothing(0.9);
    QCOMPARE(accuracy->shownSeries("a/eval_accuracy")->y, accuracy->series("a/eval_accuracy")->y);
    // The loss chart's menu sets the loss smoothing.
    Q_EMIT panel.chart(ui::PlotsPanel::Loss)->smoothingRequested(0.99);
    QCOMPARE(panel.smoothing(), 0.99);
    QCOMPARE(panel.chart(ui::PlotsPanel::Loss)->smoothing(), 0.0);
    // Off again: drawn as recorded.
    speed->setSmoothing(0);
    QCOMPARE(speed->shownSeries("a/samples_per_s")->y, speed->series("a/samples_per_s")->y);
  }

  // Issue 9 (chart basics): the x-axis as steps, epochs, samples seen or wall
  // time. Each run maps by its own shape (two runs of different batch sizes
  // line up by samples), markers move with their run, the plan has no wall
  // time, and the read-out keeps the step.
  void xAxisAsEpochsSamplesOrTime() {
    ui::PlotsPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    ui::PlotSeries plan;
    for (int step = 1; step <= 40; ++step) plan.append(step, 0.1);
    const auto records = [](int steps, double secondsPerStep) {
      std::vector<MetricRecord> out;
      for (int step = 1; step <= steps; ++step) {
        MetricRecord r = trainRecord(step, 1.0 / step, 0.1);
        r.wallSeconds = 3.0 + secondsPerStep * step;
        out.push_back(r);
        if (step == 20) {
          MetricRecord change = r;
          change.kind = RecordKind::LrChange;
          change.lr = 0.05;
          out.push_back(change);
        }
      }
      return out;
    };
    // Run a: 10 steps an epoch, 32 samples a step; run b: 64 samples a step.
    panel.showRuns({{"a", "a", records(40, 0.5), {10, 32}}, {"b", "b", records(20, 2.0), {5, 64}}});
    panel.setSchedulePreview(plan, {10, 32});
    MetricChart* loss = panel.chart(ui::PlotsPanel::Loss);
    MetricChart* lr = panel.chart(ui::PlotsPanel::LearningRate);
    QCOMPARE(loss->shownSeries("a/train_loss")->x.back(), 40.0);

    auto* box = panel.findChild<QComboBox*>("xAxis");
    QVERIFY(box);
    box->setCurrentIndex(ui::PlotsPanel::Epochs);
    QCOMPARE(panel.xAxis(), ui::PlotsPanel::Epochs);
    QCOMPARE(loss->xLabel(), QString("epoch"));
    QCOMPARE(loss->shownSeries("a/train_loss")->x.back(), 4.0);
    QCOMPARE(loss->shownSeries("b/train_loss")->x.back(), 4.0);  // 20 steps of 5 an epoch
    QCOMPARE(loss->series("a/train_loss")->x.back(), 40.0);      // the data keep their steps
    loss->refreshNow();
    QVERIFY(loss->plot()->xAxis->range().upper < 5.0);

    panel.setXAxis(ui::PlotsPanel::Samples);
    QCOMPARE(box->currentIndex(), int(ui::PlotsPanel::Samples));
    QCOMPARE(loss->shownSeries("a/train_loss")->x.back(), 40.0 * 32);
    QCOMPARE(loss->shownSeries("b/train_loss")->x.back(), 20.0 * 64);
    // One run: the plan of the form's settings is drawn under it, in samples too.
    panel.showRuns({{"a", "a", records(40, 0.5), {10, 32}}});
    QVERIFY(lr->shownSeries("preview/lr"));
    QCOMPARE(lr->shownSeries("preview/lr")->x.back(), 40.0 * 32);
    // The learning-rate change marker of run a sits at its samples.
    bool found = false;
    for (int i = 0; i < lr->plot()->itemCount(); ++i)
      if (auto* line = qobject_cast<QCPItemStraightLine*>(lr->plot()->item(i)); line && line->visible())
        found = found || line->point1->coords().x() == 20.0 * 32;
    QVERIFY(found);

    panel.setXAxis(ui::PlotsPanel::WallTime);
    QCOMPARE(loss->shownSeries("a/train_loss")->x.back(), 3.0 + 0.5 * 40);
    QVERIFY(lr->shownSeries("preview/lr")->empty());  // a plan has no wall time
    QVERIFY(!lr->shownSeries("a/lr")->empty());
    panel.showRuns({{"a", "a", records(40, 0.5), {10, 32}}, {"b", "b", records(20, 2.0), {5, 64}}});
    QCOMPARE(loss->shownSeries("b/train_loss")->x.front(), 3.0 + 2.0);
    QCOMPARE(loss->shownSeries("b/train_loss")->x.back(), 3.0 + 2.0 * 20);

    // The read-out says the step and the time.
    QCustomPlot* plot = loss->plot();
    loss->refreshNow();
    const QPoint at(static_cast<int>(plot->xAxis->coordToPixel(3.0 + 0.5 * 10)), plot->axisRect()->center().y());
    QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(plot->mapToGlobal(at)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(plot, &move);
    QString text;
    for (int i = 0; i < plot->itemCount(); ++i)
      if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->visible() && t->text().contains("(step"))
        text = t->text();
    QVERIFY2(text.contains("(step 10, wall time (h:m:s) 8)"), qPrintable(text));

    // Back to steps: everything where it was.
    panel.setXAxis(ui::PlotsPanel::Steps);
    QCOMPARE(loss->xLabel(), QString("step"));
    QCOMPARE(loss->shownSeries("b/train_loss")->x.back(), 20.0);
    QCOMPARE(loss->shownSeries("a/train_loss")->x.back(), 40.0);
  }

  // Issue 9, item 6: two runs overlaid have long legend entries; the legend
  // takes as many columns as fit, so each entry reads whole.
  void legendEntriesReadWhole() {
    for (const int width : {420, 700, 1600}) {
      MetricChart chart("Loss", "loss");
      chart.resize(width, 320);
      chart.show();
      QVERIFY(QTest::qWaitForWindowExposed(&chart));
      for (const char* run : {"fashion-mnist-cnn", "lower-lr"})
        for (const char* what : {"train (raw)", "train (smoothed)", "eval"}) {
          const QString key = QString("%1/%2").arg(run, what);
          chart.addSeries(key, QString("%1: %2").arg(run, what), plain());
          for (int step = 1; step <= 10; ++step) chart.append(key, step, 1.0 / step);
        }
      chart.refreshNow();
      QCPLegend* legend = chart.plot()->legend;
      QVERIFY(legend->visible());
      QCOMPARE(legend->itemCount(), 6);
      const QFontMetrics metrics(legend->font());
      for (int i = 0; i < legend->itemCount(); ++i) {
        auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
        QVERIFY(item);
        const int needed = metrics.horizontalAdvance(item->plottable()->name()) + legend->iconSize().width();
        QVERIFY2(item->outerRect().width() >= needed, qPrintable(QString("%1 px wide: '%2' has %3 of %4 px")
                                                                     .arg(width)
                                                                     .arg(item->plottable()->name())
                                                                     .arg(item->outerRect().width())
                                                                     .arg(needed)));
        QVERIFY(item->outerRect().right() <= chart.plot()->width());
      }
      if (width == 1600) QCOMPARE(legend->columnCount(), 3);
    }
  }

  // Issue 9, item 8: at a scale factor of 2 (a high-DPI screen, or an export
  // at twice the size) the curves, the planned schedule and the grid are two
  // device pixels wide, not hairlines: their pens scale with the painter.
  void linesKeepTheirWidthAtScaleFactorTwo() {
    ui::PlotsPanel panel;
    panel.resize(1000, 700);
    ui::PlotSeries plan;
    for (int step = 1; step <= 100; ++step) plan.append(step, 0.1);
    panel.setSchedulePreview(plan);
    panel.beginRun("run", "run");
    std::vector<MetricRecord> records;
    for (int step = 1; step <= 100; ++step) records.push_back(trainRecord(step, 1.0, 0.05));
    panel.appendRecords("run", records);
    MetricChart* lr = panel.chart(ui::PlotsPanel::LearningRate);
    lr->setParent(nullptr);  // on its own, at a known size
    lr->resize(600, 300);
    lr->show();
    QVERIFY(QTest::qWaitForWindowExposed(lr));
    // Drawn as on a screen with a device pixel ratio of 2: QCustomPlot's
    // buffers at twice the pixels, the widget rendered into an image of that
    // ratio. (QCustomPlot::toPixmap with a scale would turn hairlines into
    // full pens itself, hiding the fault.)
    lr->plot()->setBufferDevicePixelRatio(2.0);
    lr->refreshNow();
    const QSize size = lr->plot()->size();
    QImage image(size * 2, QImage::Format_RGB32);
    image.setDevicePixelRatio(2.0);
    image.fill(lr->palette().color(QPalette::Base));
    lr->plot()->render(&image);
    image.setDevicePixelRatio(1.0);
    QVERIFY(image.width() > 800);
    const QColor base = lr->palette().color(QPalette::Base);
    const auto near = [](QColor a, QColor b, int tolerance) {
      return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance &&
             std::abs(a.blue() - b.blue()) <= tolerance;
    };
    // The longest run of pixels of this colour down a column (a horizontal
    // line's thickness) in the middle of the plot.
    const auto thickness = [&](QColor colour) {
      int best = 0;
      for (int x = image.width() / 2 - 100; x < image.width() / 2 + 100; ++x) {
        int run = 0;
        for (int y = 0; y < image.height(); ++y) {
          run = near(image.pixelColor(x, y), colour, 40) ? run + 1 : 0;
          best = std::max(best, run);
        }
      }
      return best;
    };
    const QColor actual = lr->plot()->graph(0)->pen().color();
    QVERIFY2(thickness(actual) >= 2, qPrintable(QString::number(thickness(actual))));
    QCPGraph* planned = nullptr;
    for (int i = 0; i < lr->plot()->graphCount(); ++i)
      if (lr->plot()->graph(i)->name() == "planned") planned = lr->plot()->graph(i);
    QVERIFY(planned);
    QVERIFY2(thickness(planned->pen().color()) >= 2, qPrintable(QString::number(thickness(planned->pen().color()))));
    // The grid's vertical lines: the longest run across a row, in rows
    // between two horizontal grid lines (0.08 and 0.09).
    int grid = 0;
    const int from = static_cast<int>(2 * lr->plot()->yAxis->coordToPixel(0.09)) + 8;
    const int to = static_cast<int>(2 * lr->plot()->yAxis->coordToPixel(0.08)) - 8;
    QVERIFY(to - from > 20);
    for (int y = from; y < to; ++y) {
      int run = 0;
      for (int x = image.width() / 6; x < image.width() * 9 / 10; ++x) {
        const QColor c = image.pixelColor(x, y);
        run = !near(c, base, 6) && !near(c, actual, 40) ? run + 1 : 0;
        grid = std::max(grid, run);
      }
    }
    QVERIFY2(grid >= 2 && grid <= 4, qPrintable(QString::number(grid)));
    lr->setParent(&panel);  // destroyed with the panel
  }

  // The CPU share SystemMonitor reads from /proc/self/stat: a thread kept busy
  // for 0.4 s is about one core's worth (of all cores), and an idle wait near
  // nothing; with no NVIDIA driver here the GPU figures are absent, saying
  // why.
  void systemMonitorReadsTheCpuShare() {
    ui::SystemMonitor monitor;
    // The expected share from the kernel's own count (the process's CPU
    // clock over the wall clock), so a loaded machine cannot fail it.
    const auto cpuSeconds = [] {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    };
    QVERIFY(std::isnan(monitor.sample(-1).cpuPercent));  // no interval yet
    QElapsedTimer t;
    t.start();
    const double cpuFrom = cpuSeconds();
    volatile double sink = 0;
    while (cpuSeconds() - cpuFrom < 0.4) sink = sink + std::sqrt(static_cast<double>(t.nsecsElapsed()));
    const double busy = monitor.sample(-1).cpuPercent;
    const double cores = std::max(1, QThread::idealThreadCount());
    const double expected = 100.0 * (cpuSeconds() - cpuFrom) / (static_cast<double>(t.nsecsElapsed()) * 1e-9) / cores;
    // /proc counts in clock ticks (10 ms): 0.4 s is known to within a few %.
    QVERIFY2(std::abs(busy - expected) < 0.15 * expected + 2,
             qPrintable(QString("%1 %, expected %2 %").arg(busy).arg(expected)));
    const double oneCore = 100.0 / cores;
    QThread::msleep(400);
    const double idle = monitor.sample(-1).cpuPercent;
    QVERIFY2(idle < 0.3 * oneCore, qPrintable(QString::number(idle)));
    if (!monitor.gpuFigures()) {
      QVERIFY(monitor.noGpuReason().startsWith("no GPU figures: "));
      QVERIFY(std::isnan(monitor.sample(0).gpuPercent));
    }
  }

  // Issue 9 (progress and health): a divergence warning. A loss that falls
  // and stays down, or hovers near zero, says nothing; one that climbs back
  // past twice its lowest, and more than halfway to where it started, says so
  // once, naming the step and the lowest point; a non-finite step says so
  // once. Drawn runs get a marker at that step; only arriving records signal.
  void divergenceIsSaidOnceWithItsStep() {
    const auto train = [](int64_t step, double loss) { return trainRecord(step, loss, 0.1); };
    {
      ui::DivergenceWatch falling;
      for (int s = 1; s <= 500; ++s)
        QVERIFY(!falling.observe(train(s, 2.3 / std::sqrt(s) * (1 + 0.3 * std::sin(s * 1.7)))));
      ui::DivergenceWatch nearZero;  // noise around 1e-4: tripling it is still noise
      for (int s = 1; s <= 500; ++s) QVERIFY(!nearZero.observe(train(s, s < 50 ? 2.0 / s : 1e-4 * (2 + std::sin(s)))));
    }
    ui::DivergenceWatch watch;
    std::optional<ui::DivergenceWatch::Warning> said;
    int warnings = 0;
    for (int s = 1; s <= 300; ++s) {
      const double loss = s <= 100 ? 2.3 - 1.9 * s / 100.0 : 0.4 + 0.05 * (s - 100);  // down to 0.4, then up
      if (auto w = watch.observe(train(s, loss))) {
        said = w;
        ++warnings;
      }
    }
    QCOMPARE(warnings, 1);
    QVERIFY(said->step > 100 && said->step < 150);  // soon after the turn
    QVERIFY2(said->text.contains("step " + QString::number(said->step)), qPrintable(said->text));
    QVERIFY2(said->text.contains("at step 10"), qPrintable(said->text));  // the lowest, near step 100..109
    QVERIFY(said->text.contains("optimizer.lr"));
    MetricRecord bad;
    bad.kind = RecordKind::NonFinite;
    bad.step = 301;
    const auto nonFinite = watch.observe(bad);
    QVERIFY(nonFinite && nonFinite->step == 301 && nonFinite->text.contains("NaN"));
    bad.step = 302;
    QVERIFY(!watch.observe(bad));

    // The panel: arriving records signal and mark; a run drawn from its
    // history is only marked.
    std::vector<MetricRecord> climbing;
    for (int s = 1; s <= 200; ++s)
      climbing.push_back(train(s, s <= 100 ? 2.3 - 1.9 * s / 100.0 : 0.4 + 0.05 * (s - 100)));
    ui::PlotsPanel panel;
    QSignalSpy seen(&panel, &ui::PlotsPanel::divergenceSeen);
    panel.beginRun("live", "live");
    panel.appendRecords("live", climbing);
    QCOMPARE(seen.count(), 1);
    QCOMPARE(seen.front().at(0).toString(), QString("live"));
    QVERIFY(seen.front().at(1).toString().contains("climbing"));
    QCOMPARE(panel.chart(ui::PlotsPanel::Loss)->markerCount(), 1);
    panel.showRuns({{"past", "past", climbing}});
    QCOMPARE(seen.count(), 1);
    QCOMPARE(panel.chart(ui::PlotsPanel::Loss)->markerCount(), 1);
  }
};

QTEST_MAIN(TestMetricChart)
#include "test_metric_chart.moc"
