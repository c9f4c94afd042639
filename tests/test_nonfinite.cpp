// A loss that turns NaN or infinite (train.on_nonfinite): such a step is never
// applied; stop ends the run as failed with a message that says what to do
// (exit 1, the last checkpoint kept); skip goes on; rollback goes back to the
// last checkpoint written before the trouble with the learning rate scaled
// down, and the metrics then hold each step once. Each event is a row of
// metrics.csv and counted in summary.json.
#include "test_support.h"

#include <set>

using namespace studio;

namespace {

TrainConfig diverging(const QString& out, const std::string& policy) {
  TrainConfig c = test::smallConfig(out);
  c.model.kind = "mlp";
  c.model.width = 32;
  c.data.train_limit = 1024;
  c.train.epochs = 1;  // 32 steps
  c.train.log_every_steps = 2;
  c.optimizer.kind = OptimizerKind::sgd;
  c.optimizer.lr = 0.05;
  // From step 20 on the learning rate is 5e7: the loss goes NaN at once.
  c.schedule.kind = ScheduleKind::step;
  c.schedule.step.step_size = 20;
  c.schedule.step.gamma = 1e9;
  c.output.checkpoint_every_steps = 5;
  c.train.on_nonfinite.setName(policy);
  c.train.rollback_lr_factor = 1e-9;
  return c;
}

int countRows(const std::string& runDir, const char* kind) {
  int n = 0;
  for (const auto& line : test::readLines(runDir + "/metrics.csv")) n += line.rfind(std::string(kind) + ",", 0) == 0;
  return n;
}

}  // namespace

class TestNonFinite : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void stopEndsTheRunAndSaysWhatToDo() {
    QTemporaryDir dir;
    Session s;
    s.start(diverging(dir.path(), "stop"));
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY(!r.badInput);
    QVERIFY2(r.error.find("became NaN or infinite at step 2") != std::string::npos, r.error.c_str());
    QVERIFY(r.error.find("train.on_nonfinite") != std::string::npos);
    QVERIFY(r.nonfinite.steps >= 1);
    QVERIFY(r.steps < 32);
    QVERIFY(countRows(r.runDir, "nonfinite") >= 1);
    auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary["nonfinite_steps"].get<int64_t>(), r.nonfinite.steps);
    // The checkpoint kept is from before the trouble, and resumable.
    QVERIFY(QFile::exists(QString::fromStdString(r.runDir + "/checkpoints/last.ckpt")));
  }

  void skipGoesOnWithoutTheBadSteps() {
    QTemporaryDir dir;
    Session s;
    s.start(diverging(dir.path(), "skip"));
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QCOMPARE(r.steps, int64_t(32));
    QCOMPARE(r.nonfinite.steps, r.nonfinite.skippedSteps);
    QVERIFY(r.nonfinite.steps >= 1);
    QCOMPARE(countRows(r.runDir, "nonfinite"), static_cast<int>(r.nonfinite.steps));
    QCOMPARE(countRows(r.runDir, "train"), 32);
  }

  void rollbackGoesBackWithALowerRate() {
    QTemporaryDir dir;
    Session s;
    s.start(diverging(dir.path(), "rollback"));
    std::vector<MetricRecord> live;
    const RunSummary r = test::runToEnd(s, &live);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QCOMPARE(r.nonfinite.rollbacks, int64_t(1));
    QVERIFY(r.test.figures["eval_accuracy"] > 0.5);
    // Every step once in metrics.csv (the rolled-back rows are gone).
    std::set<int64_t> steps;
    for (const auto& line : test::readLines(r.runDir + "/metrics.csv"))
      if (line.rfind("train,", 0) == 0) QVERIFY(steps.insert(std::stoll(line.substr(6))).second);
    QCOMPARE(steps.size(), size_t(32));
    QCOMPARE(countRows(r.runDir, "rollback"), 1);
    // The rollback went to the checkpoint before the trouble (step 20), and
    // the run says so: a record, the rate it continues at, settings.json.
    const auto rollback =
        std::find_if(live.begin(), live.end(), [](auto& x) { return x.kind == RecordKind::Rollback; });
    QVERIFY(rollback != live.end());
    QCOMPARE(rollback->step, int64_t(20));
    QVERIFY(std::fabs(rollback->lr - 0.05) < 1e-9);
    auto settings = nlohmann::json::parse(test::readText(r.runDir + "/settings.json"));
    QCOMPARE(settings["run_info"]["lr_changes"][0]["rollback"].get<int>(), 1);
  }

  void rollbackWithoutACheckpointStops() {
    QTemporaryDir dir;
    TrainConfig c = diverging(dir.path(), "rollback");
    c.output.checkpoint_every_steps = 0;  // no checkpoint before step 20's trouble
    c.schedule.step.step_size = 3;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY2(r.error.find("rolling back did not help") != std::string::npos, r.error.c_str());
    QVERIFY(test::readText(r.runDir + "/log.txt").find("no checkpoint yet to roll back to") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestNonFinite)
#include "test_nonfinite.moc"
