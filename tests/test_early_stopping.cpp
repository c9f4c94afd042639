// Early stopping (train.early_stopping): a run whose evaluation metric stops
// improving ends "early-stopped" after `patience` evaluations without an
// improvement larger than min_delta; the best checkpoint (by that metric) is
// kept and read by Python's torch.load at the best step; the reason is logged,
// a row of metrics.csv and in summary.json; a stopped and resumed run ends at
// the same step as a straight one; a run that keeps improving is not stopped;
// bad settings name the field.
#include "test_support.h"

#include <cmath>

#include "studio/eval_report.h"

using namespace studio;

namespace {

// Learns for 8 steps, then its learning rate drops to 1e-12 of itself: from
// there the evaluation loss stays put (within far less than min_delta).
TrainConfig plateauing(const QString& out) {
  TrainConfig c = test::smallConfig(out);
  c.model.kind = "mlp";
  c.model.width = 32;
  c.data.train_limit = 1024;
  c.train.epochs = 3;  // 96 steps planned
  c.evaluation.every_steps = 4;
  c.schedule.kind = ScheduleKind::step;
  c.schedule.step.step_size = 8;
  c.schedule.step.gamma = 1e-12;
  c.train.early_stopping.metric = "eval_loss";
  c.train.early_stopping.patience = 3;
  c.train.early_stopping.min_delta = 1e-4;
  return c;
}

struct EvalRow {
  int64_t step;
  double loss, accuracy;
};

std::vector<EvalRow> evalRows(const std::string& runDir, std::vector<int64_t>* earlyStops = nullptr) {
  std::vector<EvalRow> rows;
  for (const auto& line : test::readLines(runDir + "/metrics.csv")) {
    MetricRecord r;
    if (!parseMetricsCsvRow(line, r)) continue;
    if (r.kind == RecordKind::Eval) rows.push_back({r.step, r.evalLoss, r.evalAccuracy});
    if (r.kind == RecordKind::EarlyStop && earlyStops) earlyStops->push_back(r.step);
  }
  return rows;
}

}  // namespace

class TestEarlyStopping : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void plateauEndsTheRunAfterItsPatience() {
    QTemporaryDir dir;
    Session s;
    s.start(plateauing(dir.path()));
    std::vector<MetricRecord> live;
    const RunSummary r = test::runToEnd(s, &live);
    QCOMPARE(statusName(r.status), std::string("early-stopped"));
    QVERIFY(r.steps < r.totalSteps);
    QVERIFY(std::isfinite(r.test.figures["eval_accuracy"]));  // the final test still runs

    // From the metrics alone: the best evaluation (min_delta counted), then
    // exactly `patience` evaluations that do not beat it, then the stop.
    std::vector<int64_t> stops;
    const std::vector<EvalRow> rows = evalRows(r.runDir, &stops);
    double best = NAN;
    int64_t bestStep = 0, bad = 0, stoppedAt = -1;
    for (const auto& e : rows) {
      if (std::isnan(best) || e.loss < best - 1e-4) {
        best = e.loss;
        bestStep = e.step;
        bad = 0;
      } else if (++bad == 3) {
        stoppedAt = e.step;
        break;
      }
    }
    QCOMPARE(r.steps, stoppedAt);
    QCOMPARE(rows.back().step, stoppedAt);
    QCOMPARE(stops, std::vector<int64_t>{stoppedAt});
    QVERIFY(bestStep >= 8);  // it learned first
    QCOMPARE(r.earlyStopping.bestStep, bestStep);
    QVERIFY(std::abs(r.earlyStopping.best - best) <= 1e-8 * std::abs(best));  // metrics.csv has 9 digits
    bool liveStop = false;
    for (const auto& m : live) liveStop |= m.kind == RecordKind::EarlyStop && m.step == stoppedAt;
    QVERIFY(liveStop);

    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary["status"].get<std::string>(), std::string("early-stopped"));
    QCOMPARE(summary["early_stopping"]["metric"].get<std::string>(), std::string("eval_loss"));
    QCOMPARE(summary["early_stopping"]["best_step"].get<int64_t>(), bestStep);
    QVERIFY(summary["early_stopping"]["stopped"].get<bool>());
    const std::string reason = summary["early_stopping"]["reason"].get<std::string>();
    QVERIFY2(reason.find("test loss has not improved by more than 0.0001 for 3 evaluations") != std::string::npos,
             reason.c_str());
    QVERIFY(test::readText(r.runDir + "/log.txt").find("early stop at step " + std::to_string(stoppedAt)) !=
            std::string::npos);

    // The best checkpoint is the one of the best step, as Python reads it.
    const auto py = test::python("check_checkpoint.py", {QString::fromStdString(r.runDir + "/checkpoints/best.ckpt"),
                                                         QString::number(bestStep)});
    QVERIFY2(py.code == 0, qPrintable(py.output));
  }

  // Issue 40, item 4 (one clear model): with a validation split, the
  // headline test figures are the best checkpoint's weights' (Keras's
  // restore_best_weights, Lightning's test(ckpt_path="best")), named in
  // summary.json and in the test report, with the last weights' figures
  // beside them; export and predict take those weights by default (auto).
  // Without a validation split, the last weights, named so.
  void theTestFiguresNameTheirWeights() {
    QTemporaryDir dir;
    TrainConfig c = plateauing(dir.filePath("validated"));
    c.data.val_fraction = 0.2;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("early-stopped"));
    QVERIFY(r.earlyStopping.bestStep < r.steps);
    QCOMPARE(r.test.weights, std::string("best"));
    QCOMPARE(r.test.weightsStep, r.earlyStopping.bestStep);
    QVERIFY(std::isfinite(r.test.last["eval_accuracy"]) && std::isfinite(r.test.last["eval_loss"]));
    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary["test_weights"]["which"].get<std::string>(), std::string("best"));
    QCOMPARE(summary["test_weights"]["step"].get<int64_t>(), r.earlyStopping.bestStep);
    QCOMPARE(summary["last_weights"]["test_accuracy"].get<double>(), r.test.last["eval_accuracy"]);
    // The test report is of the same weights as the headline, and says whose.
    const EvalReport report = readEvalReport(r.runDir + "/eval/step-" + std::to_string(r.steps) + ".json");
    QCOMPARE(report.split, std::string("test"));
    QCOMPARE(report.weights, std::string("best"));
    QCOMPARE(report.weightsStep, r.earlyStopping.bestStep);
    QCOMPARE(report.accuracy, r.test.figures["eval_accuracy"]);
    // Export by default: the headline's weights.
    const ExportResult exported = exportRun(r.runDir, dir.filePath("export").toStdString());
    QCOMPARE(exported.checkpoint, std::string("best"));
    QVERIFY(exported.note.empty());
    const auto pre =
        nlohmann::json::parse(test::readText(dir.filePath("export").toStdString() + "/preprocessing.json"));
    QCOMPARE(pre["weights"].get<std::string>(), std::string("best"));

    // No validation split: evaluations measure the test split, and the headline is the last weights'.
    Session plain;
    plain.start(plateauing(dir.filePath("plain")));
    const RunSummary p = test::runToEnd(plain);
    QCOMPARE(p.test.weights, std::string("last"));
    QCOMPARE(p.test.weightsStep, p.steps);
    QVERIFY(std::isnan(p.test.last["eval_accuracy"]));
    const auto plainSummary = nlohmann::json::parse(test::readText(p.runDir + "/summary.json"));
    QCOMPARE(plainSummary["test_weights"]["which"].get<std::string>(), std::string("last"));
    QVERIFY(!plainSummary.contains("last_weights"));
    QCOMPARE(exportRun(p.runDir, dir.filePath("plain-export").toStdString()).checkpoint, std::string("last"));
  }

  void resumedRunStopsWhereTheStraightRunStops() {
    QTemporaryDir dir;
    Session straight;
    straight.start(plateauing(dir.filePath("straight")));
    const RunSummary a = test::runToEnd(straight);
    QCOMPARE(statusName(a.status), std::string("early-stopped"));

    // Stopped between two evaluations of the plateau, then resumed: the count
    // of evaluations without improvement came back with the checkpoint.
    Session first;
    StartOptions o;
    o.stopAtStep = a.steps - 6;
    first.start(plateauing(dir.filePath("resumed")), o);
    const RunSummary stopped = test::runToEnd(first);
    QCOMPARE(statusName(stopped.status), std::string("stopped"));
    Session second;
    second.resume(stopped.runDir);
    const RunSummary b = test::runToEnd(second);
    QCOMPARE(statusName(b.status), std::string("early-stopped"));
    QCOMPARE(b.steps, a.steps);
    QCOMPARE(b.earlyStopping.bestStep, a.earlyStopping.bestStep);
    QCOMPARE(b.earlyStopping.best, a.earlyStopping.best);
  }

  void improvingRunIsNotStopped() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.train.epochs = 2;
    c.evaluation.every_steps = 8;
    c.train.early_stopping.metric = "eval_accuracy";  // mode auto: higher is better
    c.train.early_stopping.patience = 100;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QCOMPARE(r.steps, r.totalSteps);
    QVERIFY(r.earlyStopping.reason.empty());
    // The best is the highest accuracy, first reached at its step.
    double best = -1;
    int64_t bestStep = 0;
    for (const auto& e : evalRows(r.runDir))
      if (e.accuracy > best) best = e.accuracy, bestStep = e.step;
    QVERIFY(std::abs(r.earlyStopping.best - best) <= 1e-8);
    QCOMPARE(r.earlyStopping.bestStep, bestStep);
    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QVERIFY(!summary["early_stopping"]["stopped"].get<bool>());
  }

  void badSettingsNameTheField_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::newRow("metric") << "train.early_stopping.metric"
                            << "\"val_loss\"";
    QTest::newRow("mode") << "train.early_stopping.mode"
                          << "\"lower\"";
    QTest::newRow("patience") << "train.early_stopping.patience"
                              << "0";
    QTest::newRow("min_delta") << "train.early_stopping.min_delta"
                               << "-1";
  }
  void badSettingsNameTheField() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QTemporaryDir dir;
    const auto r =
        test::cli({"train", "--preset", "fashion-mnist-mlp", "--set", "train.early_stopping.metric=eval_loss", "--set",
                   key + "=" + value, "--set", "output.dir=" + dir.path()});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.output.contains(key), qPrintable(r.output));
    QVERIFY(QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty());  // no run folder
  }
};

QTEST_GUILESS_MAIN(TestEarlyStopping)
#include "test_early_stopping.moc"
