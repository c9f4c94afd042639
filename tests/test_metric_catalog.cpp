// The metric catalogue is the one description of metrics.csv: its header
// is the catalogue's columns, every field survives a row written and read
// back, and rows of another width or with garbage are refused.
#include <QtTest/QtTest>

#include "studio/metric_catalog.h"

using namespace studio;

class TestMetricCatalog : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void headerIsTheCatalogue() {
    std::string want = "kind,step,epoch";
    for (const auto& m : metricCatalog()) want += std::string(",") + m.id;
    QCOMPARE(metricsCsvHeader(), want);
    QVERIFY(findMetric("eval_accuracy") && findMetric("eval_accuracy")->kind == RecordKind::Eval);
    QVERIFY(!findMetric("no_such_metric"));
    for (const auto& m : metricCatalog()) QVERIFY2((m.real == nullptr) != (m.whole == nullptr), m.id);
  }

  void everyFieldRoundTrips() {
    MetricRecord r;
    r.kind = RecordKind::Eval;
    r.step = 1234567890123;
    r.epoch = 42;
    double v = 0.5;
    for (const auto& m : metricCatalog()) {
      if (m.whole) r.*m.whole = 77;
      else r.*m.real = (v *= 1.7);
    }
    r.lossScale = MetricRecord::kNone;  // an empty cell reads back as none
    MetricRecord back;
    QVERIFY(parseMetricsCsvRow(metricsCsvRow(r), back));
    QCOMPARE(back.kind, r.kind);
    QCOMPARE(back.step, r.step);
    QCOMPARE(back.epoch, r.epoch);
    for (const auto& m : metricCatalog()) {
      if (std::isnan(m.value(r))) QVERIFY2(std::isnan(m.value(back)), m.id);
      else QVERIFY2(std::fabs(m.value(back) - m.value(r)) <= 1e-8 * std::fabs(m.value(r)), m.id);
    }
  }

  void badRowsAreRefused() {
    MetricRecord r;
    const std::string good = metricsCsvRow(r);
    MetricRecord out;
    QVERIFY(parseMetricsCsvRow(good, out));
    QVERIFY(!parseMetricsCsvRow(good + ",1", out));
    QVERIFY(!parseMetricsCsvRow("train,1,0", out));
    QVERIFY(!parseMetricsCsvRow("weird" + good.substr(5), out));
    std::string garbage = good;
    garbage.replace(garbage.find(",0,"), 3, ",0x,");
    QVERIFY(!parseMetricsCsvRow(garbage, out));
  }
};

QTEST_GUILESS_MAIN(TestMetricCatalog)
#include "test_metric_catalog.moc"
