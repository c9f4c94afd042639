// kill -9 at each phase of a checkpoint save, then resume: metrics.csv holds
// every step once, and the weights and every metric row equal an
// uninterrupted run's (bitwise, on the CPU). The crash points are the
// engine's own (STUDIO_CRASH_AT=<phase>:<n>): before and after the metric rows
// are flushed and synced, before the checkpoint's temporary file, after it is
// written, and after it replaced the last one.
#include "test_support.h"
#include "torch_test_support.h"

#include <QDirIterator>
#include <QProcess>

using namespace studio;

namespace {

// The columns that must match exactly (not wall time, samples/s, memory).
std::vector<std::string> comparable(const std::string& runDir) {
  std::vector<std::string> out;
  const auto lines = test::readLines(runDir + "/metrics.csv");
  for (size_t i = 1; i < lines.size(); ++i) {
    MetricRecord r;
    if (!parseMetricsCsvRow(lines[i], r)) {
      out.push_back("unreadable row: " + lines[i]);
      continue;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d %lld %.9g %.9g %.9g %.9g %.9g", int(r.kind), (long long)r.step, r.trainLoss,
                  r.lr, r.gradNorm, r.evalLoss, r.evalAccuracy);
    out.push_back(buf);
  }
  return out;
}

QStringList trainArgs(const QString& out) {
  return {"train",
          "--preset",
          "fashion-mnist-mlp",
          "--set",
          "data.train_limit=512",
          "--set",
          "data.test_limit=256",
          "--set",
          "model.width=16",
          "--set",
          "train.epochs=2",
          "--set",
          "train.batch_size=32",
          "--set",
          "train.log_every_steps=1",
          "--set",
          "evaluation.every_steps=8",
          "--set",
          "output.checkpoint_every_steps=5",
          "--set",
          "performance.device=\"cpu\"",
          "--set",
          "performance.threads=2",
          "--out",
          out};
}

using test::onlyRunIn;

// The temporary files a write cut short by a kill leaves ("*.tmp.XXXXXX").
QStringList leftovers(const QString& run) {
  QStringList found;
  QDirIterator it(run, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    it.next();
    if (it.fileName().contains(".tmp.")) found << it.filePath();
  }
  return found;
}

// The CLI's training run, killed (SIGKILL) at the nth time at phase: its folder.
QString killedRun(const QString& out, const QString& phase, int nth) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("STUDIO_CRASH_AT", phase + ":" + QString::number(nth));
  p.setProcessEnvironment(env);
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(test::env("STUDIO_CLI"), trainArgs(out));
  if (!p.waitForFinished(test::kHangLimitMs) || p.exitStatus() != QProcess::CrashExit) return QString();
  return onlyRunIn(out);
}

nlohmann::json summaryOf(const QString& run) {
  return nlohmann::json::parse(test::readText((run + "/summary.json").toStdString()), nullptr, false);
}

}  // namespace

class TestCrashSafety : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  QString m_reference;

 private Q_SLOTS:
  void initTestCase() {
    const QString out = m_dir.path() + "/reference";
    const test::Ran r = test::cli(trainArgs(out));
    QVERIFY2(r.code == 0, qPrintable(r.output));
    m_reference = onlyRunIn(out);
    QVERIFY(!m_reference.isEmpty());
  }

  void killedAtEachPhaseResumesToTheSameRun_data() {
    QTest::addColumn<QString>("phase");
    for (const char* p : {"checkpoint-before-metrics-flush", "checkpoint-after-metrics-flush", "checkpoint-before-temp",
                          "checkpoint-after-temp", "checkpoint-after-renamed"})
      QTest::newRow(p) << QString(p);
  }
  void killedAtEachPhaseResumesToTheSameRun() {
    QFETCH(QString, phase);
    // Killed as kill -9, the third time: earlier checkpoints exist.
    const QString run = killedRun(m_dir.path() + "/" + phase, phase, 3);
    QVERIFY(!run.isEmpty());
    QVERIFY(QFile::exists(run + "/checkpoints/last.ckpt"));
    // Killed after its temporary file was written: the file is left...
    if (phase == "checkpoint-after-temp") QVERIFY2(!leftovers(run).isEmpty(), "no temporary file was left");

    const test::Ran resumed = test::cli({"resume", run});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
    // ...and the resume removes it.
    QVERIFY2(leftovers(run).isEmpty(), qPrintable(leftovers(run).join(", ")));
    expectTheReferenceRun(run);
  }

  // Killed before its first checkpoint: resume trains it again from step 0
  // in its folder (its settings are there), its early rows made again.
  void killedBeforeTheFirstCheckpointResumesFromTheStart() {
    const QString run = killedRun(m_dir.path() + "/first", "checkpoint-before-temp", 1);
    QVERIFY(!run.isEmpty());
    QVERIFY(!QFile::exists(run + "/checkpoints/last.ckpt"));
    QVERIFY(!test::metricRows(run.toStdString(), RecordKind::Train).empty());  // rows it will make again
    const test::Ran resumed = test::cli({"resume", run});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
    QVERIFY2(resumed.output.contains("training again from step 0"), qPrintable(resumed.output));
    expectTheReferenceRun(run);
  }

  // Killed after the final checkpoint, before summary.json: the resumed
  // run trains no step, and its summary's figures come from its rows.
  void killedBeforeTheSummaryKeepsItsFigures() {
    const QString run = killedRun(m_dir.path() + "/summary", "run-before-summary", 1);
    QVERIFY(!run.isEmpty());
    QVERIFY(!QFile::exists(run + "/summary.json"));
    const test::Ran resumed = test::cli({"resume", run});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
    const nlohmann::json got = summaryOf(run), want = summaryOf(m_reference);
    QCOMPARE(QString::fromStdString(got.value("status", "")), QString("completed"));
    for (const char* key : {"final_train_loss", "final_eval_loss"}) {
      QVERIFY2(got[key].is_number(), key);
      // metrics.csv keeps 9 significant digits.
      QVERIFY2(test::close(got[key].get<double>(), want[key].get<double>(), 1e-7, 0), key);
    }
    // The throughput the run's rows recorded (its last train row's).
    const auto rows = test::metricRows(run.toStdString(), RecordKind::Train);
    QVERIFY(got["samples_per_second"].is_number());
    QCOMPARE(got["samples_per_second"].get<double>(), rows.back().samplesPerSecond);
    expectTheReferenceRun(run);
  }

 private:
  void expectTheReferenceRun(const QString& run) {
    // Every step once, and each row as the uninterrupted run wrote it.
    const auto want = comparable(m_reference.toStdString()), got = comparable(run.toStdString());
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) QCOMPARE(QString::fromStdString(got[i]), QString::fromStdString(want[i]));
    // The same final weights, bit for bit.
    auto a = test::weightsOf(m_reference.toStdString()), b = test::weightsOf(run.toStdString());
    auto sa = test::stateOf(*a), sb = test::stateOf(*b);
    QCOMPARE(sa.size(), sb.size());
    for (const auto& [name, t] : sa) QVERIFY2(torch::equal(t, sb.at(name)), name.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCrashSafety)
#include "test_crash_safety.moc"
