// The learning-rate range test (training-studio-cli lr-find): one step per
// rate, the rates growing exponentially from --min to --max exactly; it ends
// when the smoothed loss passes 4 times its lowest; the suggestion is where
// the bias-corrected moving average of the loss (beta 0.98, as fastai's
// lr_find) falls fastest against log(lr) before its lowest point, after the
// first tenth of the sweep. Bad options are refused before any folder exists.
#include "test_support.h"

using namespace studio;

class TestLrFind : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sweepsStopsAndSuggests() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());  // 16 steps an epoch: the sweep crosses epochs
    // A schedule the sweep does not use, which a run would refuse (a OneCycle
    // warm-up of one step): it does not stop the sweep.
    c.schedule.kind = ScheduleKind::onecycle;
    c.train.max_steps = 2;
    LrFindOptions o;
    o.lrMin = 1e-5;
    o.lrMax = 100;
    o.steps = 60;
    Session s;
    s.findLearningRate(c, o);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QVERIFY(QString::fromStdString(r.runDir).endsWith("-lr-find"));
    const auto rows = test::metricRows(r.runDir, RecordKind::Train);
    QVERIFY2(rows.size() >= 20 && rows.size() < 60, qPrintable(QString::number(rows.size())));  // diverged early
    QCOMPARE(r.steps, int64_t(rows.size()));
    std::vector<double> lrs, smoothed;
    double avg = 0, lowest = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < rows.size(); ++i) {
      QCOMPARE(rows[i].step, int64_t(i + 1));
      const double want = o.lrMin * std::pow(o.lrMax / o.lrMin, double(i) / double(o.steps - 1));
      QVERIFY2(test::close(rows[i].lr, want, 1e-8, 0), qPrintable(QString("%1 %2").arg(rows[i].lr).arg(want)));
      if (!std::isfinite(rows[i].trainLoss)) break;
      avg = 0.98 * avg + 0.02 * rows[i].trainLoss;
      lrs.push_back(rows[i].lr);
      smoothed.push_back(avg / (1 - std::pow(0.98, double(i + 1))));
      lowest = std::min(lowest, smoothed.back());
    }
    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"))["lr_find"];
    const std::string ended = summary["ended"].get<std::string>();
    QVERIFY2(
        ended.find("passed 4 times its lowest") != std::string::npos || ended.find("not finite") != std::string::npos,
        ended.c_str());
    if (ended.find("passed") != std::string::npos) QVERIFY(smoothed.back() > 4 * lowest);
    // The suggestion, recomputed from the recorded losses.
    const size_t skip = 6;
    size_t low = skip;
    for (size_t i = skip; i < smoothed.size(); ++i)
      if (smoothed[i] < smoothed[low]) low = i;
    double steepest = 0, suggested = lrs[low] / 10;
    for (size_t i = skip + 1; i <= low; ++i) {
      const double slope = (smoothed[i] - smoothed[i - 1]) / (std::log(lrs[i]) - std::log(lrs[i - 1]));
      if (slope < steepest) steepest = slope, suggested = lrs[i];
    }
    // metrics.csv keeps 9 digits of each figure
    QVERIFY(test::close(r.lrFind.minimum, lrs[low], 1e-8, 0));
    QVERIFY(test::close(r.lrFind.suggestion, suggested, 1e-8, 0));
    QCOMPARE(summary["suggested_lr"].get<double>(), r.lrFind.suggestion);
    QVERIFY(r.lrFind.suggestion <= r.lrFind.minimum);
    QVERIFY(!QFile::exists(QString::fromStdString(r.runDir + "/checkpoints/last.ckpt")));
  }

  void badOptionsMakeNoFolder() {
    QTemporaryDir dir;
    const TrainConfig c = test::smallConfig(dir.path());
    auto refused = [&](LrFindOptions o, const char* want) {
      try {
        Session().findLearningRate(c, o);
      } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).find(want) != std::string::npos, e.what());
        return;
      }
      QFAIL("expected an error");
    };
    LrFindOptions o;
    o.lrMin = 1;
    o.lrMax = 0.1;
    refused(o, "0 < --min < --max (got 1 and 0.1)");
    o.lrMin = 1e-7;  // reversed and small: the message shows them as they are
    o.lrMax = 1e-8;
    refused(o, "(got 1e-07 and 1e-08)");
    o = LrFindOptions{};
    o.steps = 2;
    refused(o, "--steps must be between 5 and 100000 (got 2)");
    QCOMPARE(QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 0);

    const auto ran =
        test::cli({"lr-find", "--set", "data.train_limit=256", "--set", "model.width=4", "--set",
                   "performance.device=cpu", "--set", "output.dir=" + dir.path(), "--steps", "30", "--max", "10"});
    QVERIFY2(ran.code == 0 && ran.output.contains("suggested learning rate: "), qPrintable(ran.output));
    // The hint names the setting that acts under the schedule (cyclic: its max_lr, not optimizer.lr).
    const auto cyclic = test::cli({"lr-find", "--set", "data.train_limit=256", "--set", "model.width=4", "--set",
                                   "performance.device=cpu", "--set", "output.dir=" + dir.path(), "--set",
                                   "schedule.kind=cyclic", "--steps", "30", "--max", "10"});
    QVERIFY2(cyclic.code == 0 && cyclic.output.contains("use it: --set schedule.cyclic.max_lr=") &&
                 !cyclic.output.contains("optimizer.lr="),
             qPrintable(cyclic.output));
    const auto bad = test::cli({"lr-find", "--min", "0", "--set", "output.dir=" + dir.path()});
    QVERIFY2(bad.code == 2 && bad.output.contains("0 < --min < --max"), qPrintable(bad.output));
  }
};

QTEST_GUILESS_MAIN(TestLrFind)
#include "test_lr_find.moc"
