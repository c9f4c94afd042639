// Resume: N steps, stop, resume to M steps gives bitwise the same parameters
// and metrics as M uninterrupted steps on the CPU, with shuffling,
// augmentation, dropout (the RNG state), momentum, a schedule and both
// loader modes in play; the stop falls mid-epoch.
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "test_support.h"
#include "torch_test_support.h"

#include "studio/file_io.h"

using namespace studio;

namespace {

TrainConfig resumeConfig(const QString& out, const std::string& loaderMode) {
  TrainConfig c = test::smallConfig(out);
  c.model.dropout = 0.2;
  c.data.augment_flip = true;
  c.data.augment_crop = 2;
  c.train.epochs = 2;  // 16 steps an epoch
  c.schedule.kind = ScheduleKind::onecycle;
  c.schedule.onecycle.max_lr = 0.1;
  c.evaluation.every_steps = 10;
  c.loader.mode.setName(loaderMode);
  c.loader.workers = 3;
  c.loader.prefetch = 2;
  return c;
}

// Columns that must match exactly (not wall time, samples/s, memory).
std::vector<std::string> comparable(const std::string& runDir) {
  std::vector<std::string> out;
  auto lines = test::readLines(runDir + "/metrics.csv");
  for (size_t i = 1; i < lines.size(); ++i) {
    MetricRecord r;
    if (!parseMetricsCsvRow(lines[i], r)) continue;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d %lld %lld %.9g %.9g %.9g %.9g %.9g", int(r.kind), (long long)r.step,
                  (long long)r.epoch, r.trainLoss, r.lr, r.gradNorm, r.evalLoss, r.evalAccuracy);
    out.push_back(buf);
  }
  return out;
}

}  // namespace

class TestResume : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void resumedEqualsUninterrupted_data() {
    QTest::addColumn<QString>("loader");
    QTest::addColumn<int>("stopAt");
    QTest::newRow("device-resident, mid-epoch") << "device" << 13;
    QTest::newRow("worker threads, after an eval") << "workers" << 20;
  }
  void resumedEqualsUninterrupted() {
    QFETCH(QString, loader);
    QFETCH(int, stopAt);
    QTemporaryDir dir;
    TrainConfig c = resumeConfig(dir.path(), loader.toStdString());

    Session whole;
    whole.start(c);
    RunSummary a = test::runToEnd(whole);
    QCOMPARE(statusName(a.status), std::string("completed"));
    QCOMPARE(a.steps, int64_t(32));

    Session first;
    StartOptions stopEarly;
    stopEarly.stopAtStep = stopAt;
    first.start(c, stopEarly);
    RunSummary b1 = test::runToEnd(first);
    QCOMPARE(statusName(b1.status), std::string("stopped"));
    QCOMPARE(b1.steps, int64_t(stopAt));

    Session second;
    second.resume(b1.runDir);
    RunSummary b2 = test::runToEnd(second);
    QCOMPARE(statusName(b2.status), std::string("completed"));
    QCOMPARE(b2.steps, int64_t(32));
    QCOMPARE(b2.runDir, b1.runDir);

    auto wa = test::weightsOf(a.runDir), wb = test::weightsOf(b2.runDir);
    auto sa = test::stateOf(*wa), sb = test::stateOf(*wb);
    QCOMPARE(sa.size(), sb.size());
    for (const auto& [name, t] : sa) QVERIFY2(torch::equal(t, sb.at(name)), name.c_str());

    auto ma = comparable(a.runDir), mb = comparable(b2.runDir);
    QCOMPARE(mb.size(), ma.size());
    for (size_t i = 0; i < ma.size(); ++i) QCOMPARE(QString::fromStdString(mb[i]), QString::fromStdString(ma[i]));
    QCOMPARE(b2.test.figures["eval_accuracy"], a.test.figures["eval_accuracy"]);
  }

  // A callback's own figures (CheckpointState::callbackFigures) are written
  // with the checkpoint and read back; a checkpoint without them (every run's
  // today) has no such part. Early stopping's come back through them too,
  // from where checkpoints always kept them ("counters"), even with early
  // stopping off (issue 42.2).
  void callbackFiguresComeBack() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    Session run;
    StartOptions stopEarly;
    stopEarly.stopAtStep = 3;
    run.start(c, stopEarly);
    const RunSummary r = test::runToEnd(run);
    QCOMPARE(r.steps, int64_t(3));
    const std::string last = r.runDir + "/checkpoints/last.ckpt";
    const CheckpointState plain = readCheckpointState(last);
    QCOMPARE(plain.callbackFigures.size(), size_t(3));
    QVERIFY(std::isnan(plain.callbackFigures.at("early_stopping.best")));
    QCOMPARE(plain.callbackFigures.at("early_stopping.bad_evals"), 0.0);
    QVERIFY(!CheckpointFile(last).root.has("callback_figures"));
    QVERIFY(CheckpointFile(last).root.dict("counters").has("early_best_step"));

    auto model = test::weightsOf(r.runDir);
    Optimizer optimizer(model->parameters(), c.optimizer);
    LossScaler scaler(c.precision.loss_scale, torch::kCPU, false);
    torch::Tensor skipped = torch::zeros({}, torch::kFloat32);
    CheckpointState state = plain;
    state.callbackFigures = {{"plateau.best", 0.3125},
                             {"plateau.bad_evals", 9007199254740992.0},
                             {"early_stopping.best", 0.75},
                             {"early_stopping.best_step", 2},
                             {"early_stopping.bad_evals", 1}};
    const std::string path = (dir.path() + "/figures.ckpt").toStdString();
    saveCheckpoint({path}, {*model, optimizer, scaler, skipped, state, nullptr});

    const CheckpointState back = readCheckpointState(path);
    QCOMPARE(back.callbackFigures, state.callbackFigures);
    QCOMPARE(back.position.step, plain.position.step);
    // Early stopping's stay in "counters" with their first names and types.
    const ArchiveDict counters = CheckpointFile(path).root.dict("counters");
    QCOMPARE(counters.real("early_best"), 0.75);
    QCOMPARE(counters.integer("early_best_step"), int64_t(2));
    QCOMPARE(CheckpointFile(path).root.dict("callback_figures").keys().size(), size_t(2));
    // A resume's full load hands them on too.
    CheckpointState loaded;
    loadCheckpoint(path, {*model, optimizer, scaler, skipped, loaded, nullptr}, torch::kCPU);
    QCOMPARE(loaded.callbackFigures, state.callbackFigures);
  }

  // A run folder without a checkpoint yet (killed in its first steps)
  // trains again from step 0 in its folder; a fork without one must be
  // forked again (its start is its parent's checkpoint).
  void resumeWithoutACheckpointStartsAgain() {
    QTemporaryDir dir;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Session().resume((dir.path() + "/nope").toStdString()));
    QDir(dir.path()).mkpath("run/checkpoints");
    TrainConfig c = test::smallConfig(dir.path());
    c.model.kind = "mlp";
    c.model.width = 8;
    c.train.max_steps = 3;
    saveConfigFile(c, (dir.path() + "/run/settings.json").toStdString());
    Session again;
    again.resume((dir.path() + "/run").toStdString());
    const RunSummary r = test::runToEnd(again);
    QVERIFY2(r.status == RunStatus::completed, r.error.c_str());
    QCOMPARE(r.steps, int64_t(3));
    QVERIFY(QFile::exists(dir.path() + "/run/checkpoints/last.ckpt"));

    QDir(dir.path()).mkpath("fork/checkpoints");
    nlohmann::json j = toJson(c);
    j["run_info"] = {{"parent", {{"run", "/runs/parent"}, {"checkpoint", "last"}}}};
    writeFileAtomically((dir.path() + "/fork/settings.json").toStdString(), j.dump(2));
    try {
      Session().resume((dir.path() + "/fork").toStdString());
      QFAIL("expected an error");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("checkpoints/last.ckpt") != std::string::npos &&
                   what.find("starts from /runs/parent's checkpoint; fork that run again") != std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestResume)
#include "test_resume.moc"
