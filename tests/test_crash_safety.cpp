// kill -9 at each phase of a checkpoint save, then resume: metrics.csv holds
// every step once, and the weights and every metric row equal an
// uninterrupted run's (bitwise, on the CPU). The crash points are the
// engine's own (STUDIO_CRASH_AT=<phase>:<n>): before and after the metric rows
// are flushed and synced, before the checkpoint's temporary file, after it is
// written, and after it replaced the last one.
#include "test_support.h"
#include "torch_test_support.h"

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
  return {"train", "--preset", "fashion-mnist-mlp", "--set", "data.train_limit=512", "--set", "data.test_limit=256",
          "--set", "model.width=16", "--set", "train.epochs=2", "--set", "train.batch_size=32", "--set",
          "train.log_every_steps=1", "--set", "evaluation.every_steps=8", "--set",
          "output.checkpoint_every_steps=5", "--set", "performance.device=\"cpu\"", "--set",
          "performance.threads=2", "--out", out};
}

QString onlyRunIn(const QString& out) {
  const QStringList runs = QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  return runs.size() == 1 ? out + "/" + runs.front() : QString();
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
    const QString out = m_dir.path() + "/" + phase;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("STUDIO_CRASH_AT", phase + ":3");  // the third time: earlier checkpoints exist
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(test::env("STUDIO_CLI"), trainArgs(out));
    QVERIFY(p.waitForFinished(300000));
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);  // killed, as kill -9
    const QString run = onlyRunIn(out);
    QVERIFY(!run.isEmpty());
    QVERIFY(QFile::exists(run + "/checkpoints/last.ckpt"));

    const test::Ran resumed = test::cli({"resume", run});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
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
