// TensorBoard event files (issue 10, item 2): every run writes them into
// RUN/tensorboard; TensorBoard's own Python reader reads them back
// (tests/reference/check_tensorboard.py) and every metrics.csv value,
// the settings, the hparams session and the final figures match; a resumed
// run goes on in a second file and still reads as one series. The record
// framing's CRC-32C is checked against the standard check value.
#include "run/tensorboard_writer.h"
#include "test_support.h"
#include "torch_test_support.h"

using namespace studio;

class TestTensorBoard : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // CRC-32C of "123456789" is 0xE3069283 (the check value in the CRC
  // catalogue and RFC 3720, appendix B.4).
  void crc32cCheckValue() {
    const std::string check = "123456789";
    QCOMPARE(crc32c(check.data(), check.size()), 0xE3069283u);
    const uint32_t crc = 0xE3069283u;
    QCOMPARE(maskedCrc32c(check.data(), check.size()), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
    const std::string record = tfRecord("abc");
    QCOMPARE(record.size(), size_t(8 + 4 + 3 + 4));
    QCOMPARE(static_cast<unsigned char>(record[0]), static_cast<unsigned char>(3));
    QCOMPARE(record.substr(12, 3), std::string("abc"));
  }

  void tensorboardReadsARun() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.filePath("runs"));
    c.train.epochs = 2;
    c.evaluation.every_steps = 6;
    c.train.log_every_steps = 1;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    const test::Ran ran = test::python("check_tensorboard.py", {QString::fromStdString(r.runDir), "1"});
    qInfo("%s", qPrintable(ran.output.trimmed()));
    QCOMPARE(ran.code, 0);
    QVERIFY(ran.output.contains("tensorboard ok"));
  }

  void aResumedRunReadsAsOne() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.filePath("runs"));
    c.train.epochs = 2;
    c.evaluation.every_steps = 8;
    const RunSummary done = test::stopThenResume(c, 10);
    QCOMPARE(statusName(done.status), std::string("completed"));
    QCOMPARE(QDir(QString::fromStdString(done.runDir + "/tensorboard")).entryList(QDir::Files).size(), 2);
    const test::Ran ran = test::python("check_tensorboard.py", {QString::fromStdString(done.runDir), "1"});
    qInfo("%s", qPrintable(ran.output.trimmed()));
    QCOMPARE(ran.code, 0);
  }
};

QTEST_GUILESS_MAIN(TestTensorBoard)
#include "test_tensorboard.moc"
