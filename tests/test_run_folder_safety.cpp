// A run folder or checkpoint from elsewhere never runs code and is never a
// way to write outside the folder:
//  - checkpoints are data only: one that carries TorchScript code (a
//    __setstate__) or a pickle that calls os.system is refused, by resume and
//    export, with a message, and the code does not run;
//  - a checkpoint whose bytes changed fails its checksum;
//  - links planted in a run folder (temporary-file names, log.txt, the
//    checkpoints folder) are never written through;
//  - what the studio writes, Python's torch.load reads with weights_only.
#include "test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>

#include <unistd.h>

using namespace studio;

namespace {

using test::cli;
using test::python;
using Result = test::Ran;

using test::contents;
using test::copyTree;

}  // namespace

class TestRunFolderSafety : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  QString m_stopped;  // a run stopped at step 6 of 16
  int m_copies = 0;

  // A fresh copy of the stopped run, to spoil.
  QString copyOfRun() {
    const QString to = m_dir.path() + QString("/copy-%1").arg(++m_copies);
    copyTree(m_stopped, to);
    return to;
  }

 private Q_SLOTS:
  void initTestCase() {
    TrainConfig c = test::smallConfig(m_dir.path() + "/runs");
    c.model.kind = "mlp";
    c.model.width = 16;
    c.model.depth = 1;
    m_stopped = test::stoppedRun(c, 6);
  }

  void checkpointReadsInPythonWithWeightsOnly() {
    const Result r = python("check_checkpoint.py", {m_stopped + "/checkpoints/last.ckpt", "6"});
    QVERIFY2(r.code == 0 && r.output.contains("checkpoint ok"), qPrintable(r.output));
  }

  void checkpointCarryingCodeIsRefused_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("message");
    QTest::newRow("TorchScript __setstate__") << "jit_setstate.ckpt"
                                              << "carries TorchScript code";
    QTest::newRow("pickle calling os.system") << "pickle_reduce.ckpt"
                                              << "holds something other than tensors and plain values";
  }
  void checkpointCarryingCodeIsRefused() {
    QFETCH(QString, file);
    QFETCH(QString, message);
    const QString hostile = m_dir.path() + "/hostile";
    const QString marker = m_dir.path() + "/code-ran-marker";
    Result made = python("make_hostile_checkpoints.py", {hostile, marker});
    QVERIFY2(made.code == 0, qPrintable(made.output));

    const QString run = copyOfRun();
    const QString ckpt = run + "/checkpoints/last.ckpt";
    QVERIFY(QFile::remove(ckpt));
    QVERIFY(QFile::copy(hostile + "/" + file, ckpt));
    for (const QStringList& args : {QStringList{"resume", run}, QStringList{"export", run, "--which", "last", "--out",
                                                                            m_dir.path() + "/hostile-export"}}) {
      const Result r = cli(args);
      QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.output)));
      QVERIFY2(r.output.contains(message) && r.output.contains(ckpt), qPrintable(r.output));
      QVERIFY2(!r.output.contains("CODE-RAN-FROM-CHECKPOINT"), qPrintable(r.output));
      QVERIFY(!QFile::exists(marker));
    }
  }

  void changedCheckpointBytesFailTheChecksum() {
    const QString run = copyOfRun();
    const QString ckpt = run + "/checkpoints/last.ckpt";
    QFile f(ckpt);
    QVERIFY(f.open(QIODevice::ReadWrite));
    // The middle of the file lies in the weights (tensor records dominate it).
    const qint64 at = f.size() / 2;
    QVERIFY(f.seek(at));
    QByteArray bytes = f.read(16);
    for (auto& b : bytes) b = static_cast<char>(~b);
    QVERIFY(f.seek(at));
    f.write(bytes);
    f.close();
    const Result r = cli({"resume", run});
    QVERIFY2(r.code == 2, qPrintable(r.output));
    QVERIFY2(r.output.contains("fails its CRC-32 check") && r.output.contains(ckpt), qPrintable(r.output));
  }

  void plantedTemporaryLinksAreNeverWrittenThrough() {
    const QString run = copyOfRun();
    QStringList victims;
    for (const QString& planted :
         {QString("metrics.csv.tmp"), QString("summary.json.tmp"), QString("settings.json.tmp"),
          QString("checkpoints/last.ckpt.tmp"), QString("checkpoints/best.ckpt.tmp")}) {
      const QString victim = m_dir.path() + "/victim-" + QString(planted).replace('/', '-');
      QFile v(victim);
      QVERIFY(v.open(QIODevice::WriteOnly));
      v.write("precious");
      v.close();
      QVERIFY(QFile::link(victim, run + "/" + planted));
      victims << victim;
    }
    Session s;
    s.resume(run.toStdString());
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QCOMPARE(r.steps, int64_t(16));
    for (const QString& v : victims) QCOMPARE(contents(v), QByteArray("precious"));
  }

  void plantedLogLinkIsRefused() {
    const QString run = copyOfRun();
    const QString victim = m_dir.path() + "/victim-log";
    QFile v(victim);
    QVERIFY(v.open(QIODevice::WriteOnly));
    v.write("precious");
    v.close();
    QVERIFY(QFile::remove(run + "/log.txt"));
    QVERIFY(QFile::link(victim, run + "/log.txt"));
    const Result r = cli({"resume", run});
    QVERIFY2(r.code == 2, qPrintable(r.output));
    QVERIFY2(r.output.contains(run + "/log.txt is a symbolic link"), qPrintable(r.output));
    QCOMPARE(contents(victim), QByteArray("precious"));
  }

  void linkedCheckpointFolderIsRefused() {
    const QString run = copyOfRun();
    const QString elsewhere = m_dir.path() + "/elsewhere-checkpoints";
    QVERIFY(QDir().rename(run + "/checkpoints", elsewhere));
    QVERIFY(QFile::link(elsewhere, run + "/checkpoints"));
    const QByteArray before = contents(elsewhere + "/last.ckpt");
    const Result r = cli({"resume", run});
    QVERIFY2(r.code == 2, qPrintable(r.output));
    QVERIFY2(r.output.contains(run + "/checkpoints is a symbolic link"), qPrintable(r.output));
    QCOMPARE(QDir(elsewhere).entryList(QDir::Files).size(), 1);  // last.ckpt, and nothing new
    QCOMPARE(contents(elsewhere + "/last.ckpt"), before);
  }

  void aRunFolderIsLockedWhileOneTrainsInIt() {
    const QString run = copyOfRun();
    Session first;
    first.resume(run.toStdString());
    first.pause();
    // Another process is refused at once, with a message; nothing it wrote.
    const Result second = cli({"resume", run});
    QVERIFY2(second.code == 2, qPrintable(second.output));
    QVERIFY2(second.output.contains("is in use") && second.output.contains("pid"), qPrintable(second.output));
    first.stop();
    QCOMPARE(statusName(test::runToEnd(first).status), std::string("stopped"));
    // Once the first has ended, the folder is free again.
    const Result third = cli({"resume", run});
    QVERIFY2(third.code == 0, qPrintable(third.output));
    // Every step once in the metrics, though three processes had the folder.
    QStringList steps;
    for (const auto& line : test::readLines(run.toStdString() + "/metrics.csv"))
      if (line.rfind("train,", 0) == 0) steps << QString::fromStdString(line).section(',', 1, 1);
    QCOMPARE(steps.size(), 16);
    QCOMPARE(steps.removeDuplicates(), 0);
  }

  void runsStartedTogetherGetTheirOwnFolders() {
    const QString out = m_dir.path() + "/together";
    QList<QProcess*> ps;
    for (int i = 0; i < 3; ++i) {
      auto* p = new QProcess(this);
      p->setProcessChannelMode(QProcess::MergedChannels);
      p->start(test::env("STUDIO_CLI"), {"train", "--preset", "fashion-mnist-mlp", "--set", "data.train_limit=256",
                                         "--set", "train.max_steps=2", "--set", "name=\"same\"", "--out", out});
      ps << p;
    }
    for (QProcess* p : ps) {
      QVERIFY(p->waitForFinished(test::kHangLimitMs));
      QVERIFY2(p->exitCode() == 0, p->readAll().constData());
    }
    const QStringList folders = QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(folders.size(), 3);
    for (const QString& f : folders) {
      QVERIFY(f.contains("-same"));
      QVERIFY(test::readText((out + "/" + f + "/summary.json").toStdString()).find("completed") != std::string::npos);
    }
  }

  void resumeAfterTheBatchSizeWasEditedIsRefused() {
    const QString run = copyOfRun();
    // The run stopped at batch 6 of 16; with batches 8 times as large an epoch has 2.
    const std::string settings = run.toStdString() + "/settings.json";
    auto doc = nlohmann::json::parse(test::readText(settings));
    doc["train"]["batch_size"] = 256;
    std::ofstream(settings) << doc.dump();
    const Result r = cli({"resume", run});
    QVERIFY2(r.code == 2, qPrintable(r.output));
    QVERIFY2(r.output.contains("the run's data or batch size changed since"), qPrintable(r.output));
  }

  void badSettingsInARunFolderNameTheFile() {
    const QString run = copyOfRun();
    const std::string settings = run.toStdString() + "/settings.json";
    auto doc = nlohmann::json::parse(test::readText(settings));
    doc["optimizer"]["lr"] = -1;
    std::ofstream(settings) << doc.dump();
    const Result r = cli({"resume", run});
    QVERIFY2(r.code == 2, qPrintable(r.output));
    QVERIFY2(r.output.contains("invalid settings in settings file " + run + "/settings.json") &&
                 r.output.contains("optimizer.lr must be > 0 (got -1)"),
             qPrintable(r.output));
  }
};

QTEST_GUILESS_MAIN(TestRunFolderSafety)
#include "test_run_folder_safety.moc"
