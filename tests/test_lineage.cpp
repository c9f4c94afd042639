// Continue and fork (training-studio-cli continue / fork): a finished run
// continued with a constant schedule equals a longer straight run, bit for
// bit on the CPU; a restarted schedule runs again over the new steps; a
// stopped continuation resumes; a fork starts from the parent's exact
// weights, position and random state and records its parent and the
// settings it changed; bad input is refused before any folder is made.
#include "test_support.h"
#include "torch_test_support.h"

#include "studio/lr_schedule.h"
#include "studio/settings_schema.h"
#include "train/run_lineage.h"

using namespace studio;

namespace {

// Rows that must match exactly (not wall time, samples/s, memory).
std::vector<std::string> comparable(const std::string& runDir, int64_t afterStep = 0) {
  std::vector<std::string> out;
  auto lines = test::readLines(runDir + "/metrics.csv");
  for (size_t i = 1; i < lines.size(); ++i) {
    MetricRecord r;
    if (!parseMetricsCsvRow(lines[i], r) || r.step <= afterStep) continue;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d %lld %lld %.9g %.9g %.9g %.9g %.9g", int(r.kind), (long long)r.step,
                  (long long)r.epoch, r.trainLoss, r.lr, r.gradNorm, r.evalLoss, r.evalAccuracy);
    out.push_back(buf);
  }
  return out;
}

std::vector<MetricRecord> trainRows(const std::string& runDir) { return test::metricRows(runDir, RecordKind::Train); }

// "path=value" with a value other than the config's, of the field's type.
std::string otherValue(const FieldSpec& f, TrainConfig c) {
  const nlohmann::json now = toJson(c).at(nlohmann::json::json_pointer(jsonPointer(f.path)));
  nlohmann::json v;
  const auto inRange = [&](double x) { return !f.range || f.range->contains(x); };
  switch (f.type) {
    case FieldType::Bool:
      v = !now.get<bool>();
      break;
    case FieldType::Choice:
      for (const auto& choice : f.choices)
        if (choice != now.get<std::string>()) {
          v = choice;
          break;
        }
      break;
    case FieldType::Int:
      v = inRange(now.get<double>() + 1) ? now.get<int64_t>() + 1 : now.get<int64_t>() - 1;
      break;
    case FieldType::Real: {
      const double x = now.get<double>();
      double y = x + 0.5 * (f.range && std::isfinite(f.range->hi) ? f.range->hi - x : 1.0);
      if (!inRange(y) || y == x) y = f.range ? (f.range->lo + x) / 2 : x - 1;
      v = y;
      break;
    }
    case FieldType::Size:
      v = nlohmann::json::array({8, 8});
      break;
    case FieldType::TextList:
      v = nlohmann::json::array({"changed"});
      break;
    default:
      v = now.get<std::string>() + "-changed";
  }
  return f.path + "=" + v.dump();
}

void compareRows(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  QCOMPARE(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) QCOMPARE(QString::fromStdString(a[i]), QString::fromStdString(b[i]));
}

void sameWeights(const std::string& a, const std::string& b, const std::string& which = "last",
                 const std::string& checkpointB = "") {
  auto wa = test::weightsOf(a, which), wb = test::weightsOf(b, which, checkpointB);
  auto sa = test::stateOf(*wa), sb = test::stateOf(*wb);
  QCOMPARE(sa.size(), sb.size());
  for (const auto& [name, t] : sa) QVERIFY2(torch::equal(t, sb.at(name)), name.c_str());
}

// Folders under dir.
int folders(const QString& dir) { return QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(); }

template <class F>
QString inputErrorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

TrainConfig lineageConfig(const QString& out) {
  TrainConfig c = test::smallConfig(out);  // 16 steps an epoch
  c.model.dropout = 0.2;
  c.data.augment_flip = true;
  c.loader.mode = LoaderMode::workers;
  c.loader.workers = 2;
  return c;
}

}  // namespace

class TestLineage : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void continuedEqualsLongerRun() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    c.train.epochs = 3;
    Session whole;
    whole.start(c);
    const RunSummary a = test::runToEnd(whole);
    QCOMPARE(statusName(a.status), std::string("completed"));
    QCOMPARE(a.steps, int64_t(48));

    c.train.epochs = 1;
    Session first;
    first.start(c);
    const RunSummary b1 = test::runToEnd(first);
    QCOMPARE(statusName(b1.status), std::string("completed"));
    QCOMPARE(b1.steps, int64_t(16));

    // Two more epochs, the second one interrupted and resumed.
    ContinueOptions more;
    more.epochs = 2;
    more.schedule = ContinueSchedule::constant;
    Session second;
    StartOptions stop;
    stop.stopAtStep = 37;
    second.continueRun(b1.runDir, more, stop);
    const RunSummary b2 = test::runToEnd(second);
    QCOMPARE(statusName(b2.status), std::string("stopped"));
    QCOMPARE(b2.steps, int64_t(37));
    QCOMPARE(b2.totalSteps, int64_t(48));
    Session third;
    third.resume(b1.runDir);
    const RunSummary b3 = test::runToEnd(third);
    QCOMPARE(statusName(b3.status), std::string("completed"));
    QCOMPARE(b3.steps, int64_t(48));

    sameWeights(a.runDir, b1.runDir);
    compareRows(comparable(a.runDir), comparable(b1.runDir));
    QCOMPARE(b3.test.figures["eval_accuracy"], a.test.figures["eval_accuracy"]);
    const auto continued = test::runInfo(b1.runDir)[run_files::run_info::kContinued];
    QCOMPARE(continued.size(), size_t(1));
    QCOMPARE(continued[0]["from_step"].get<int64_t>(), int64_t(16));
    QCOMPARE(continued[0]["to_step"].get<int64_t>(), int64_t(48));
    QCOMPARE(continued[0]["schedule"].get<std::string>(), std::string("constant"));
    QCOMPARE(continued[0]["lr"].get<double>(), c.optimizer.lr);
  }

  // A OneCycle run continued with restart: the new steps follow a fresh
  // OneCycle over them (PyTorch's OneCycleLR as LrSchedule computes it,
  // checked against Python in test_lr_schedule), at the given peak.
  void restartRunsTheScheduleAgain() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    c.schedule.kind = ScheduleKind::onecycle;
    c.schedule.onecycle.max_lr = 0.1;
    Session first;
    first.start(c);
    const RunSummary a = test::runToEnd(first);
    QCOMPARE(statusName(a.status), std::string("completed"));

    ContinueOptions more;
    more.epochs = 1;
    more.scheduleOverrides = {"schedule.onecycle.max_lr=0.03"};
    Session second;
    second.continueRun(a.runDir, more);
    const RunSummary b = test::runToEnd(second);
    QCOMPARE(statusName(b.status), std::string("completed"));
    QCOMPARE(b.steps, int64_t(32));
    ScheduleConfig again = c.schedule;
    again.onecycle.max_lr = 0.03;
    const LrSchedule expected(again, c.optimizer.lr, 16);
    const LrSchedule before(c.schedule, c.optimizer.lr, 16);
    const auto rows = trainRows(a.runDir);
    QCOMPARE(rows.size(), size_t(32));
    for (const auto& r : rows) {
      const double want = r.step <= 16 ? before.lr(r.step - 1) : expected.lr(r.step - 17);
      // metrics.csv keeps 9 digits
      QVERIFY2(test::close(r.lr, want, 1e-8, 0),
               qPrintable(QString("step %1: lr %2, expected %3").arg(r.step).arg(r.lr).arg(want)));
    }
    QVERIFY(std::fabs(rows[16].lr - 0.03 / 25) < 1e-10);  // the restart begins at max_lr / div_factor
  }

  // A fork with nothing changed continues the parent exactly: the same
  // rows after the branching step and the same final weights.
  void forkStartsFromTheExactState() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    c.train.epochs = 3;
    c.output.keep_checkpoints = true;
    Session parent;
    parent.start(c);
    const RunSummary p = test::runToEnd(parent);
    QCOMPARE(statusName(p.status), std::string("completed"));
    QVERIFY(QFile::exists(QString::fromStdString(p.runDir + "/checkpoints/step-16.ckpt")));
    QVERIFY(QFile::exists(QString::fromStdString(p.runDir + "/checkpoints/step-32.ckpt")));

    ForkOptions f;
    f.from = "step-16";
    Session child;
    const std::string forkDir = child.fork(p.runDir, f);
    const RunSummary k = test::runToEnd(child);
    QCOMPARE(statusName(k.status), std::string("completed"));
    QCOMPARE(k.runDir, forkDir);
    QCOMPARE(k.steps, int64_t(48));
    QVERIFY(forkDir != p.runDir);
    QVERIFY(QString::fromStdString(forkDir).endsWith("-fork"));
    compareRows(comparable(p.runDir, 16), comparable(forkDir));
    sameWeights(p.runDir, forkDir);
    QCOMPARE(k.test.figures["eval_accuracy"], p.test.figures["eval_accuracy"]);
    const auto parentInfo = test::runInfo(forkDir)[run_files::run_info::kParent];
    QCOMPARE(parentInfo["step"].get<int64_t>(), int64_t(16));
    QCOMPARE(parentInfo["checkpoint"].get<std::string>(), std::string("step-16"));
    QCOMPARE(parentInfo["changed"].size(), size_t(0));
    QCOMPARE(QDir(QString::fromStdString(parentInfo["run"].get<std::string>())).canonicalPath(),
             QDir(QString::fromStdString(p.runDir)).canonicalPath());
  }

  // With a lower learning rate: the first step after the branch sees the
  // same weights and batch (the same loss), then the runs part.
  void forkWithALowerLearningRate() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    c.train.epochs = 2;
    c.schedule.kind = ScheduleKind::cosine;
    c.output.keep_checkpoints = true;
    Session parent;
    parent.start(c);
    const RunSummary p = test::runToEnd(parent);
    QCOMPARE(statusName(p.status), std::string("completed"));

    ForkOptions f;
    f.from = "step-16";
    f.overrides = {"optimizer.lr=0.01", "name=lower"};
    const int64_t bestStep = 16;
    Session child;
    const std::string forkDir = child.fork(p.runDir, f);
    QCOMPARE(statusName(test::runToEnd(child).status), std::string("completed"));
    QVERIFY(QString::fromStdString(forkDir).endsWith("-lower"));
    const auto info = test::runInfo(forkDir)[run_files::run_info::kParent];
    QCOMPARE(info["changed"].dump(), std::string(R"({"optimizer.lr":[0.05,0.01]})"));
    QCOMPARE(info["step"].get<int64_t>(), bestStep);

    const auto parentRows = trainRows(p.runDir), forkRows = trainRows(forkDir);
    QVERIFY(bestStep < 32);
    QCOMPARE(forkRows.size(), size_t(32 - bestStep));
    const MetricRecord& firstFork = forkRows.front();
    const MetricRecord& sameStep = parentRows[static_cast<size_t>(bestStep)];
    QCOMPARE(firstFork.step, bestStep + 1);
    QCOMPARE(sameStep.step, bestStep + 1);
    QCOMPARE(firstFork.trainLoss, sameStep.trainLoss);  // the parent's weights, the same batch
    const LrSchedule lower(c.schedule, 0.01, 32);
    QVERIFY(test::close(firstFork.lr, lower.lr(bestStep), 1e-8, 0));
    QVERIFY(forkRows[1].trainLoss != parentRows[static_cast<size_t>(bestStep) + 1].trainLoss);
  }

  // Another batch size at an epoch's end: the steps go on from the branch.
  void forkWithAnotherBatchSize() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    Session parent;
    parent.start(c);
    const RunSummary p = test::runToEnd(parent);
    ForkOptions f;
    f.overrides = {"train.batch_size=64", "train.epochs=2"};
    Session child;
    const std::string forkDir = child.fork(p.runDir, f);
    const RunSummary k = test::runToEnd(child);
    QCOMPARE(statusName(k.status), std::string("completed"));
    QCOMPARE(k.steps, int64_t(16 + 8));
    const auto rows = trainRows(forkDir);
    QCOMPARE(rows.size(), size_t(8));
    QCOMPARE(rows.front().step, int64_t(17));
    QCOMPARE(test::runInfo(forkDir)[run_files::run_info::kParent]["step_shift"].get<int64_t>(), int64_t(8));
  }

  void badInputLeavesNothing() {
    QTemporaryDir dir;
    TrainConfig c = lineageConfig(dir.path());
    c.evaluation.every_steps = 6;
    c.output.keep_checkpoints = true;
    Session parent;
    parent.start(c);
    const RunSummary p = test::runToEnd(parent);
    QCOMPARE(statusName(p.status), std::string("completed"));
    const int before = folders(dir.path());

    auto forkError = [&](const std::string& from, std::vector<std::string> overrides) {
      ForkOptions f;
      f.from = from;
      f.overrides = std::move(overrides);
      return inputErrorOf([&] { Session().fork(p.runDir, f); });
    };
    QString e = forkError("step-5", {});
    QVERIFY2(e.contains("has no step-5 checkpoint") && e.contains("step-6 (step 6)") && e.contains("last (step 16)"),
             qPrintable(e));
    e = forkError("latest", {});
    QVERIFY2(e.contains("must be best, last or step-N (got \"latest\")"), qPrintable(e));
    e = forkError("last", {"model.width=8", "train.epochs=2"});
    QVERIFY2(e.contains("fork cannot change model.width (4 in the parent, 8 asked)"), qPrintable(e));
    e = forkError("last", {"data.train_limit=100", "train.epochs=2"});
    QVERIFY2(e.contains("fork cannot change data.train_limit"), qPrintable(e));
    e = forkError("step-6", {"train.batch_size=64", "train.epochs=2"});
    QVERIFY2(e.contains("in the middle of epoch 1") && e.contains("train.batch_size"), qPrintable(e));
    e = forkError("last", {});
    QVERIFY2(e.contains("starts at step 16, where the fork's plan already ends") && e.contains("--set train.epochs=2"),
             qPrintable(e));
    e = forkError("last", {"optimizer.lr=-1", "train.epochs=2"});
    QVERIFY2(e.contains("optimizer.lr must be > 0"), qPrintable(e));
    e = inputErrorOf([&] { Session().fork((dir.path() + "/nope").toStdString(), ForkOptions{}); });
    QVERIFY2(e.contains("/nope not found"), qPrintable(e));

    // A checkpoint of another model planted among the parent's.
    TrainConfig wide = c;
    wide.model.width = 8;
    wide.output.dir = (dir.path() + "/other").toStdString();
    Session other;
    other.start(wide);
    const RunSummary o = test::runToEnd(other);
    QVERIFY(QFile::copy(QString::fromStdString(o.runDir + "/checkpoints/last.ckpt"),
                        QString::fromStdString(p.runDir + "/checkpoints/step-99.ckpt")));
    e = forkError("step-99", {"train.epochs=9"});
    QVERIFY2(e.contains("does not match the model"), qPrintable(e));
    QCOMPARE(folders(dir.path()), before + 1);  // only "other"

    auto continueError = [&](ContinueOptions more) {
      return inputErrorOf([&] { Session().continueRun(p.runDir, more); });
    };
    ContinueOptions more;
    more.epochs = 0;
    QVERIFY2(continueError(more).contains("--epochs must be 1 or more (got 0)"), qPrintable(continueError(more)));
    more.epochs = -3;
    QVERIFY(continueError(more).contains("(got -3)"));
    more.epochs = 1;
    more.schedule.setName("cosine");
    QVERIFY2(continueError(more).contains("--schedule must be restart or constant"), qPrintable(continueError(more)));
    more.schedule = ContinueSchedule::restart;
    more.scheduleOverrides = {"optimizer.lr=0.1"};
    e = continueError(more);
    QVERIFY2(e.contains("changes only the schedule") && e.contains("fork the run"), qPrintable(e));
    more.scheduleOverrides = {"schedule.kind=sideways"};
    QVERIFY2(continueError(more).contains("schedule.kind"), qPrintable(continueError(more)));
    // Nothing was recorded over: the run still ends at step 16.
    QCOMPARE(trainRows(p.runDir).back().step, int64_t(16));
    QCOMPARE(test::runInfo(p.runDir).contains(run_files::run_info::kContinued), false);
  }

  // Issue 42: the fork dialog and the engine read one fact per setting
  // (settingForkable). Each setting of the schema, changed, is refused by
  // the engine's fork exactly when that fact says so: the augmentations are
  // accepted (the engine refused all but two while the dialog offered them).
  void everySettingIsForkableExactlyAsTheSchemaSays() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.train.epochs = 1;
    Session parent;
    parent.start(c);
    const RunSummary p = test::runToEnd(parent);
    QCOMPARE(statusName(p.status), std::string("completed"));
    int refused = 0, accepted = 0;
    for (const FieldSpec& f : settingsSchema()) {
      ForkOptions fork;
      fork.overrides = {otherValue(f, readRunSettings(p.runDir)), "train.epochs=2"};
      std::string why;
      try {
        planFork(p.runDir, fork);
      } catch (const std::exception& e) {
        why = e.what();
      }
      const bool refusedHere = why.find("fork cannot change " + f.path + " ") != std::string::npos;
      QVERIFY2(refusedHere == !settingForkable(f.path),
               qPrintable(QString::fromStdString(fork.overrides[0] + ": " + (why.empty() ? "accepted" : why))));
      (refusedHere ? refused : accepted) += 1;
    }
    QVERIFY2(refused > 20 && accepted > 40, qPrintable(QString("%1 refused, %2 accepted").arg(refused).arg(accepted)));
    QVERIFY(settingForkable("data.augment_rotation") && settingForkable("data.augment_mixup"));
    QVERIFY(!settingForkable("data.image_size") && !settingForkable("model.width") && !settingForkable("task.kind"));
    // Each setting's own fact (FieldSpec::forks), not its path: MixUp's and
    // CutMix's parameters fork as their switches do, and a detector's
    // post-processing touches no weight; its sizes and boxes do not fork.
    for (const char* path : {"data.mixup_alpha", "data.cutmix_alpha", "data.mix_switch_prob",
                             "model.detector.score_threshold", "model.detector.nms_iou", "loss.label_smoothing"})
      QVERIFY2(settingForkable(path), path);
    for (const char* path : {"model.detector.min_size", "data.annotations", "task.standardize_targets", "no.such"})
      QVERIFY2(!settingForkable(path), path);
  }

  // The CLI: continue and fork end to end, with their exit status.
  void commandLine() {
    QTemporaryDir dir;
    const QStringList small{"--set", "data.train_limit=256",   "--set", "data.test_limit=128",
                            "--set", "model.width=4",          "--set", "model.depth=1",
                            "--set", "train.batch_size=32",    "--set", "train.epochs=1",
                            "--set", "performance.device=cpu", "--set", "performance.threads=2"};
    auto ran = test::cli(QStringList{"train", "--out", dir.path()} + small);
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    const QString run = dir.path() + "/" + QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).front();
    ran = test::cli({"continue", run, "--epochs", "1", "--schedule", "constant", "--lr", "0.01"});
    QVERIFY2(ran.code == 0 && ran.output.contains("steps:           16 of 16"), qPrintable(ran.output));
    ran = test::cli({"fork", run, "--set", "optimizer.lr=0.02", "--set", "train.epochs=3"});
    QVERIFY2(ran.code == 0 && ran.output.contains("forked ") && ran.output.contains("24 of 24"),
             qPrintable(ran.output));
    ran = test::cli({"continue", run, "--epochs", "0"});
    QVERIFY2(ran.code == 2 && ran.output.contains("--epochs must be 1 or more"), qPrintable(ran.output));
    ran = test::cli({"fork", run, "--set", "model.kind=mlp", "--set", "train.epochs=4"});
    QVERIFY2(ran.code == 2 && ran.output.contains("fork cannot change model.kind"), qPrintable(ran.output));
  }
};

QTEST_GUILESS_MAIN(TestLineage)
#include "test_lineage.moc"
