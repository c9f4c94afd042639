// End to end on real Fashion-MNIST: the default preset on a 10,000-image
// subset for one epoch reaches a test accuracy well above chance, the run
// folder holds every file, the live queue and metrics.csv agree, and the
// exported model.pt loads in Python's torch and gives the engine's logits.
#include "test_support.h"

#include <QFile>
#include <QProcess>

#include "studio/session.h"

using namespace studio;

class TestEndToEnd : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  RunSummary m_run;

 private Q_SLOTS:
  void initTestCase() {
    TrainConfig c = loadConfigFile(presetPath(defaultPresetDir(), "fashion-mnist-cnn"));
    c.data.train_limit = 10000;
    c.train.epochs = 1;
    c.output.dir = (m_dir.path() + "/runs").toStdString();
    Session s;
    std::vector<MetricRecord> records;
    s.start(c);
    m_run = test::runToEnd(s, &records);
    QCOMPARE(statusName(m_run.status), std::string("completed"));
    // Every record the engine wrote also reached the live queue.
    const auto rows = test::readLines(m_run.runDir + "/metrics.csv");
    QCOMPARE(rows.size(), records.size() + 1);
    QCOMPARE(s.droppedRecords(), int64_t(0));
  }

  void learnsWellAboveChance() {
    qInfo("test accuracy %.4f after %lld steps, %.0f samples/s", m_run.test.figures["eval_accuracy"],
          static_cast<long long>(m_run.steps), m_run.samplesPerSecond);
    QVERIFY2(m_run.test.figures["eval_accuracy"] >= 0.75,
             qPrintable(QString::number(m_run.test.figures["eval_accuracy"])));
    QCOMPARE(m_run.steps, int64_t(79));  // ceil(10000 / 128)
  }

  void runFolderHoldsEveryFile() {
    for (const char* f :
         {"settings.json", "metrics.csv", "log.txt", "summary.json", "checkpoints/last.ckpt", "checkpoints/best.ckpt"})
      QVERIFY2(QFile::exists(QString::fromStdString(m_run.runDir + "/" + f)), f);
    auto settings = nlohmann::json::parse(test::readText(m_run.runDir + "/settings.json"));
    QVERIFY(settings["run_info"]["libtorch_version"].get<std::string>().rfind("2.11", 0) == 0);
    QVERIFY(!settings["run_info"]["device"].get<std::string>().empty());
    std::vector<ConfigError> errors;
    configFromJson(settings, errors);  // what ran loads back as settings
    QVERIFY(errors.empty());
    auto summary = nlohmann::json::parse(test::readText(m_run.runDir + "/summary.json"));
    QCOMPARE(summary["test_accuracy"].get<double>(), m_run.test.figures["eval_accuracy"]);
    QCOMPARE(summary["status"].get<std::string>(), std::string("completed"));
    QVERIFY(test::readText(m_run.runDir + "/log.txt").find("finished: test accuracy") != std::string::npos);
    const auto rows = test::readLines(m_run.runDir + "/metrics.csv");
    QCOMPARE(QString::fromStdString(rows[0]), QString::fromStdString(metricsCsvHeader()));
    int train = 0, eval = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      MetricRecord r;
      QVERIFY(parseMetricsCsvRow(rows[i], r));
      train += r.kind == RecordKind::Train;
      eval += r.kind == RecordKind::Eval;
      if (r.kind == RecordKind::Train) {
        QVERIFY(std::isfinite(r.trainLoss) && std::isfinite(r.lr) && std::isfinite(r.gradNorm));
        QVERIFY(r.samplesPerSecond > 0 && r.memAllocatedMiB > 0);
      }
    }
    QCOMPARE(train, 79);
    QCOMPARE(eval, 1);
  }

  void exportLoadsInPython() {
    const std::string out = (m_dir.path() + "/export").toStdString();
    exportRun(m_run.runDir, out, "best");
    for (const char* f : {"model.pt", "checkpoint.ckpt", "settings.json"})
      QVERIFY2(QFile::exists(QString::fromStdString(out + "/" + f)), f);
    // The engine's own logits for the first test images, for Python to match.
    const char* python = std::getenv("STUDIO_PYTHON");
    const char* scripts = std::getenv("STUDIO_TEST_SCRIPTS");
    QVERIFY(python && scripts);
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    const QString logits = m_dir.path() + "/logits.json";
    writeEngineLogits(out, logits.toStdString());
    p.start(python, {QString(scripts) + "/check_export.py", QString::fromStdString(out), logits});
    QVERIFY(p.waitForFinished(test::kHangLimitMs));
    const QByteArray output = p.readAll();
    qInfo("%s", output.constData());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(output.contains("export ok"));
  }

  void exportRejectsBadInput() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, exportRun(m_run.runDir, "/tmp/x", "worst"));
    QVERIFY_THROWS_EXCEPTION(std::exception, exportRun("/nonexistent-run", "/tmp/x", "best"));
  }

 private:
  void writeEngineLogits(const std::string& exportDir, const std::string& path);
};

namespace studio {
// Defined in end_to_end_logits.cpp: runs the exported checkpoint in C++.
void engineLogits(const std::string& exportDir, const std::string& imagesPath, int count, nlohmann::json& out);
}  // namespace studio

void TestEndToEnd::writeEngineLogits(const std::string& exportDir, const std::string& path) {
  nlohmann::json j;
  const std::string images = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
  engineLogits(exportDir, images, 16, j);
  std::ofstream(path) << j.dump();
}

QTEST_GUILESS_MAIN(TestEndToEnd)
#include "test_end_to_end.moc"
