// The session's controls, as a front-end uses them: pause holds the step
// count, resume continues, a learning-rate change lands in the run, save-now
// and stop leave checkpoints, settings errors are refused before a thread
// starts, and a failing input ends the run with a message naming the file.
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <csignal>
#include <thread>

#include <sys/resource.h>

using namespace studio;

namespace {

TrainConfig longConfig(const QString& out) {
  TrainConfig c = test::smallConfig(out);
  c.data.train_limit = 4096;
  c.train.epochs = 20;  // long enough that the controls act mid-run
  c.train.log_every_steps = 1;
  return c;
}

bool waitFor(const std::function<bool()>& f, int ms = test::kHangLimitMs) {
  QElapsedTimer t;
  t.start();
  while (!f()) {
    if (t.elapsed() > ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

class TestSession : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void controls() {
    QTemporaryDir dir;
    Session s;
    s.start(longConfig(dir.path()));
    QVERIFY(waitFor([&] { return s.progress().step >= 5; }));

    s.pause();
    QVERIFY(waitFor([&] { return s.progress().state == SessionState::Paused; }));
    const int64_t held = s.progress().step;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    QCOMPARE(s.progress().step, held);

    s.setLearningRate(0.0123);  // applied even while paused
    s.saveCheckpointNow();
    s.resumeTraining();
    QVERIFY(waitFor([&] { return s.progress().step >= held + 5; }));
    QCOMPARE(s.progress().state, SessionState::Running);
    s.stop();
    std::vector<MetricRecord> records;
    RunSummary r = test::runToEnd(s, &records);
    QCOMPARE(statusName(r.status), std::string("stopped"));
    QVERIFY(r.steps < r.totalSteps);

    // The change is in the live records, metrics.csv and settings.json.
    bool sawChange = false, sawLrAfter = false;
    for (const auto& m : records) {
      if (m.kind == RecordKind::LrChange) {
        sawChange = true;
        QCOMPARE(m.lr, 0.0123);
        QCOMPARE(m.step, held);
      }
      if (m.kind == RecordKind::Train && m.step == held + 1) sawLrAfter = test::close(m.lr, 0.0123, 1e-12, 0);
    }
    QVERIFY(sawChange);
    QVERIFY(sawLrAfter);
    QVERIFY(QFile::exists(QString::fromStdString(r.runDir + "/checkpoints/last.ckpt")));
    auto settings = nlohmann::json::parse(test::readText(r.runDir + "/settings.json"));
    QCOMPARE(settings["run_info"]["lr_changes"].size(), size_t(1));
    QCOMPARE(settings["run_info"]["lr_changes"][0]["lr"].get<double>(), 0.0123);
    bool csvChange = false;
    for (const auto& line : test::readLines(r.runDir + "/metrics.csv")) csvChange |= line.rfind("lr_change,", 0) == 0;
    QVERIFY(csvChange);
    QCOMPARE(s.droppedRecords(), int64_t(0));
  }

  void invalidSettingsAreRefused() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.optimizer.lr = -1;
    c.train.batch_size = 0;
    try {
      Session().start(c);
      QFAIL("expected InvalidSettings");
    } catch (const InvalidSettings& e) {
      QCOMPARE(e.errors.size(), size_t(2));
      QVERIFY(std::string(e.what()).find("optimizer.lr must be > 0 (got -1)") != std::string::npos);
    }
    QCOMPARE(QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 0);  // no run folder made
  }

  void badDataFailsWithTheFileName() {
    QTemporaryDir dir;
    for (const char* name : {"train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
      QFile other(dir.path() + "/" + name);
      QVERIFY(other.open(QIODevice::WriteOnly));
    }
    QFile f(dir.path() + "/train-images-idx3-ubyte");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not an idx file");
    f.close();
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.data.root = dir.path().toStdString();
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY(r.badInput);
    QVERIFY2(r.error.find(f.fileName().toStdString()) != std::string::npos, r.error.c_str());
    QVERIFY2(r.error.find("wrong magic number") != std::string::npos, r.error.c_str());
    // The failure is recorded in the run folder too.
    QVERIFY(QFile::exists(QString::fromStdString(r.runDir + "/summary.json")));
    QVERIFY(test::readLines(r.runDir + "/log.txt").size() > 0);
  }

  void fullDiskFailsClearlyAndKeepsWhatWasRecorded() {
    // A file-size limit makes writes past 256 KiB fail as on a full disk;
    // the checkpoint (about 1.6 MB of weights) is the first file to hit it.
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.model.kind = "mlp";
    c.model.width = 512;
    c.model.depth = 1;
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 256 * 1024;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    setrlimit(RLIMIT_FSIZE, &old);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY2(r.error.find(r.runDir + "/checkpoints/last.ckpt") != std::string::npos, r.error.c_str());
    QVERIFY2(r.error.find("disk full") != std::string::npos, r.error.c_str());
    // Every metric recorded before the failure is on disk, and no torn or
    // temporary checkpoint is left behind.
    int train = 0, eval = 0;
    for (const auto& line : test::readLines(r.runDir + "/metrics.csv")) {
      train += line.rfind("train,", 0) == 0;
      eval += line.rfind("eval,", 0) == 0;
    }
    QCOMPARE(train, 16);
    QCOMPARE(eval, 1);
    QVERIFY(!QFile::exists(QString::fromStdString(r.runDir + "/checkpoints/last.ckpt")));
    QVERIFY(
        QDir(QString::fromStdString(r.runDir + "/checkpoints")).entryList({"last.ckpt.tmp*"}, QDir::Files).isEmpty());
    auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary["status"].get<std::string>(), std::string("failed"));
  }

  void missingGpuIsAClearError() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.performance.device = "cuda:7";
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY(r.badInput);
    QVERIFY2(r.error.find("performance.device") != std::string::npos, r.error.c_str());
  }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
