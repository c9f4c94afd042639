// The queue of runs (training-studio-cli queue add|list|run): a 2x2 grid
// runs one after another, each a normal run folder; a runner killed in the
// middle of the second run is resumed by the next one from that run's last
// checkpoint (every step recorded once, no new folder); a grid with an
// invalid value, a queue file edited into nonsense and a second runner get
// clear messages and exit 2 with nothing in the queue lost.
#include "test_support.h"

#include "studio/metric_record.h"
#include "studio/run_queue.h"

using namespace studio;

namespace {

const QStringList kSmall{"--set", "data.train_limit=256",   "--set", "data.test_limit=128",
                         "--set", "model.width=4",          "--set", "model.depth=1",
                         "--set", "train.epochs=2",         "--set", "schedule.kind=constant",
                         "--set", "performance.device=cpu", "--set", "performance.threads=2"};

// The CLI with extra environment variables.
test::Ran cliWith(const QStringList& args, const QStringList& env) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
  p.setProcessEnvironment(e);
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(test::env("STUDIO_CLI"), args);
  if (!p.waitForFinished(test::kHangLimitMs)) qFatal("the CLI did not finish");
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

std::vector<int64_t> trainSteps(const std::string& runDir) {
  std::vector<int64_t> steps;
  for (const auto& r : test::metricRows(runDir, RecordKind::Train)) steps.push_back(r.step);
  return steps;
}

int runFolders(const QString& dir) { return QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(); }

}  // namespace

class TestQueue : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gridRunsAndResumesAfterAKill() {
    QTemporaryDir dir;
    const QString queue = dir.path() + "/queue.json";
    const QString runs = dir.path() + "/runs";
    auto ran = test::cli(QStringList{"queue", "add", "--queue", queue, "--set", "output.dir=" + runs, "--grid",
                                     "optimizer.lr=0.05,0.02", "--grid", "train.batch_size=32,64"} +
                         kSmall);
    QVERIFY2(ran.code == 0 && ran.output.contains("added 4 run(s)"), qPrintable(ran.output));
    auto items = loadQueue(queue.toStdString());
    QCOMPARE(items.size(), size_t(4));
    QCOMPARE(items[1].label, std::string("optimizer.lr=0.05 train.batch_size=64"));
    QCOMPARE(items[1].config.train.batch_size, 64);
    QCOMPARE(items[2].config.optimizer.lr, 0.02);

    // Batch 32: checkpoints at steps 8 and 16; batch 64: at 4 and 8. The
    // fourth checkpoint is the second run's last: killed before it is written.
    ran = cliWith({"queue", "run", "--queue", queue}, {"STUDIO_CRASH_AT=checkpoint-after-metrics-flush:4"});
    QCOMPARE(ran.code, -1);
    items = loadQueue(queue.toStdString());
    QCOMPARE(items[0].status.name(), std::string("done"));
    QCOMPARE(items[1].status.name(), std::string("running"));
    QCOMPARE(items[2].status.name(), std::string("queued"));
    const std::string killed = items[1].runDir;
    QVERIFY(!killed.empty());
    QCOMPARE(runFolders(runs), 2);

    ran = test::cli({"queue", "run", "--queue", queue});
    QVERIFY2(ran.code == 0 && ran.output.contains("resuming " + QString::fromStdString(killed)),
             qPrintable(ran.output));
    items = loadQueue(queue.toStdString());
    for (const auto& i : items) QCOMPARE(i.status.name(), std::string("done"));
    QCOMPARE(items[1].runDir, killed);
    QCOMPARE(runFolders(runs), 4);
    QCOMPARE(trainSteps(killed), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    for (const auto& i : items) {
      const auto summary = nlohmann::json::parse(test::readText(i.runDir + "/summary.json"));
      QCOMPARE(summary["status"].get<std::string>(), std::string("completed"));
      QCOMPARE(readRunSettingsLr(i.runDir), i.config.optimizer.lr);
    }
    ran = test::cli({"queue", "list", "--queue", queue});
    QVERIFY2(ran.code == 0 && ran.output.count(" done ") == 4, qPrintable(ran.output));
  }

  void badInputLosesNothing() {
    QTemporaryDir dir;
    const QString queue = dir.path() + "/queue.json";
    auto ran = test::cli(QStringList{"queue", "add", "--queue", queue} + kSmall);
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    const QString before = QString::fromStdString(test::readText(queue.toStdString()));

    ran = test::cli(QStringList{"queue", "add", "--queue", queue, "--grid", "optimizer.lr=0.1,-1"} + kSmall);
    QVERIFY2(ran.code == 2 && ran.output.contains("optimizer.lr=-1") && ran.output.contains("must be > 0"),
             qPrintable(ran.output));
    ran = test::cli(QStringList{"queue", "add", "--queue", queue, "--grid", "optimizer.lrr=0.1,0.2"} + kSmall);
    QVERIFY2(ran.code == 2 && ran.output.contains("optimizer.lrr is not a known setting"), qPrintable(ran.output));
    ran = test::cli(QStringList{"queue", "add", "--queue", queue, "--grid", "optimizer.lr=0.1,,0.2"} + kSmall);
    QVERIFY2(ran.code == 2 && ran.output.contains("empty value"), qPrintable(ran.output));
    QCOMPARE(QString::fromStdString(test::readText(queue.toStdString())), before);

    // Edited by hand into nonsense: every command says what is wrong, and
    // the file is left as it is.
    auto write = [&](const std::string& text) { std::ofstream(queue.toStdString(), std::ios::trunc) << text; };
    const std::string good = before.toStdString();
    write("{ not json");
    ran = test::cli({"queue", "list", "--queue", queue});
    QVERIFY2(ran.code == 2 && ran.output.contains("is not valid JSON"), qPrintable(ran.output));
    ran = test::cli(QStringList{"queue", "add", "--queue", queue} + kSmall);
    QVERIFY2(ran.code == 2 && ran.output.contains("is not valid JSON"), qPrintable(ran.output));
    QCOMPARE(test::readText(queue.toStdString()), std::string("{ not json"));
    ran = test::cli({"queue", "run", "--queue", queue});
    QVERIFY2(ran.code == 2 && ran.output.contains("is not valid JSON"), qPrintable(ran.output));

    auto doc = nlohmann::json::parse(good);
    doc["items"][0]["settings"]["optimizer"]["lr"] = -3;
    write(doc.dump());
    ran = test::cli({"queue", "list", "--queue", queue});
    QVERIFY2(ran.code == 2 && ran.output.contains("item 1 (id 1): optimizer.lr must be > 0 (got -3)"),
             qPrintable(ran.output));
    doc = nlohmann::json::parse(good);
    doc["items"][0]["status"] = "sleeping";
    write(doc.dump());
    ran = test::cli({"queue", "list", "--queue", queue});
    QVERIFY2(ran.code == 2 && ran.output.contains("status \"sleeping\""), qPrintable(ran.output));
    write(R"({"format": "something-else"})");
    ran = test::cli({"queue", "list", "--queue", queue});
    QVERIFY2(ran.code == 2 && ran.output.contains("is not a Training Studio queue"), qPrintable(ran.output));
    ran = test::cli({"queue", "list", "--queue", dir.path()});
    QVERIFY2(ran.code == 2 && ran.output.contains("is a folder"), qPrintable(ran.output));

    // One runner at a time.
    write(good);
    {
      QueueRunnerLock runner(queue.toStdString());
      ran = test::cli({"queue", "run", "--queue", queue});
      QVERIFY2(ran.code == 2 && ran.output.contains("is being run by another process"), qPrintable(ran.output));
    }
    QCOMPARE(loadQueue(queue.toStdString()).front().status.name(), std::string("queued"));
  }

 private:
  static double readRunSettingsLr(const std::string& runDir) {
    return nlohmann::json::parse(test::readText(runDir + "/settings.json"))["optimizer"]["lr"].get<double>();
  }
};

QTEST_GUILESS_MAIN(TestQueue)
#include "test_queue.moc"
