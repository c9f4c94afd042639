// The chart: a million points draw as min/max per pixel column with the spike
// kept; zooming re-decimates exactly; log scale, markers, reset view.
#include <QtTest/QtTest>

#include <cmath>

#include <qcustomplot.h>

#include "ui/metric_chart.h"
#include "ui/plots_panel.h"

using studio::ui::MetricChart;
using studio::ui::PlotSeries;
using namespace studio;

class TestMetricChart : public QObject {
  Q_OBJECT

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
};

QTEST_MAIN(TestMetricChart)
#include "test_metric_chart.moc"
