#pragma once
// Helpers shared by the test suites: golden files written by
// tests/reference/make_references.py, and small settings for quick runs.

#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "studio/train_config.h"
#include "text_file.h"

namespace studio::test {

inline nlohmann::json loadReference(const std::string& name) {
  const char* dir = std::getenv("STUDIO_REFERENCE_DIR");
  if (!dir) qFatal("STUDIO_REFERENCE_DIR is not set; run the suites through ctest");
  const std::string path = std::string(dir) + "/" + name + ".json";
  std::ifstream in(path);
  if (!in) qFatal("missing reference file %s (the reference_generate test writes it)", path.c_str());
  return nlohmann::json::parse(in)["data"];
}

// Numbers in the golden files; inf and NaN are written as strings.
inline double number(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

inline bool close(double a, double b, double rtol, double atol) {
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// A quick CPU run on a slice of Fashion-MNIST.
inline TrainConfig smallConfig(const QString& outDir) {
  TrainConfig c;
  c.name = "test";
  c.model.kind = "cnn";
  c.model.width = 4;
  c.model.depth = 1;
  c.data.train_limit = 512;
  c.data.test_limit = 256;
  c.train.epochs = 1;
  c.train.batch_size = 32;
  c.train.log_every_steps = 4;
  c.optimizer.lr = 0.05;
  c.performance.device = "cpu";
  c.performance.threads = 2;
  c.output.dir = outDir.toStdString();
  return c;
}

}  // namespace studio::test

// Qt Test's QTRY_VERIFY, QTRY_VERIFY2 and QTRY_COMPARE wait 5 s, which a busy
// machine overran: here they wait for the hang limit, as the _WITH_TIMEOUT
// forms of the suites do.
#undef QTRY_VERIFY
#undef QTRY_VERIFY2
#undef QTRY_COMPARE
#define QTRY_VERIFY(expr) QTRY_VERIFY_WITH_TIMEOUT(expr, ::studio::test::kHangLimitMs)
#define QTRY_VERIFY2(expr, messageExpression) \
  QTRY_VERIFY2_WITH_TIMEOUT(expr, messageExpression, ::studio::test::kHangLimitMs)
#define QTRY_COMPARE(expr, expected) QTRY_COMPARE_WITH_TIMEOUT(expr, expected, ::studio::test::kHangLimitMs)

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>

#include "studio/session.h"

namespace studio::test {

// The rows of a run's metrics.csv of one kind, in order.
inline std::vector<MetricRecord> metricRows(const std::string& runDir, RecordKind kind) {
  std::vector<MetricRecord> out;
  const auto lines = readLines(runDir + "/metrics.csv");
  for (size_t i = 1; i < lines.size(); ++i) {
    MetricRecord r;
    if (parseMetricsCsvRow(lines[i], r) && r.kind == kind) out.push_back(r);
  }
  return out;
}

// The message of the DataError f throws, or "(no error)".
template <class F>
QString dataErrorOf(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

struct Ran {
  int code = -1;   // -1: it crashed
  QString output;  // stdout and stderr
};

// A sanitizer build (make sanitize: ASan + UBSan, or TSan).
#if defined(STUDIO_SANITIZED) || defined(STUDIO_SANITIZED_THREAD)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// How much longer a run takes there (a test that trains less there says so).
constexpr int kSanitizerSlowdown = kSanitized ? 4 : 1;

// How long a test waits for an event (a run's end, a file's row, a process's
// exit, a widget's state) before it calls it a hang: 10 minutes, in every
// build. A test waits for the event and asserts what happened, never how fast:
// a busy machine only makes it wait longer. Qt Test's limit per function
// (QTEST_FUNCTION_TIMEOUT) and ctest's per suite (tests/CMakeLists.txt) are
// above it, so a hang ends in this wait's report.
constexpr int kHangLimitMs = 600'000;

inline QString env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) qFatal("%s is not set; run the suites through ctest", name);
  return QString::fromLocal8Bit(v);
}

inline Ran runProgram(const QString& program, const QStringList& args, int timeoutMs = kHangLimitMs) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(program, args);
  if (!p.waitForFinished(timeoutMs)) qFatal("%s did not finish", qPrintable(program));
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

// The studio's CLI, and a script of tests/reference with the tests' Python.
inline Ran cli(const QStringList& args) { return runProgram(env("STUDIO_CLI"), args); }
inline Ran python(const QString& script, const QStringList& args) {
  return runProgram(env("STUDIO_PYTHON"), QStringList{env("STUDIO_TEST_SCRIPTS") + "/" + script} + args);
}

// A copy of a folder and everything in it (a run folder to spoil).
inline void copyTree(const QString& from, const QString& to) {
  QDir().mkpath(to);
  QDirIterator it(from, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    it.next();
    const QString target = to + "/" + QDir(from).relativeFilePath(it.filePath());
    if (it.fileInfo().isDir())
      QDir().mkpath(target);
    else
      QVERIFY(QFile::copy(it.filePath(), target));
  }
}

inline QByteArray contents(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return "<unreadable>";
  return f.readAll();
}

// The one run folder in out ("" when there is none or several).
inline QString onlyRunIn(const QString& out) {
  const QStringList runs = QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  return runs.size() == 1 ? out + "/" + runs.front() : QString();
}

// Drives a session to its end, draining the metric queue as a front-end does.
inline RunSummary runToEnd(Session& s, std::vector<MetricRecord>* records = nullptr) {
  for (;;) {
    const bool done = s.wait(std::chrono::milliseconds(50));
    MetricRecord r;
    while (s.pollMetric(r))
      if (records) records->push_back(r);
    if (done) return s.summary();
  }
}

// The folder of a run of c stopped (as the Stop button does) after stopAt steps.
inline QString stoppedRun(const TrainConfig& c, int64_t stopAt) {
  StartOptions o;
  o.stopAtStep = stopAt;
  Session s;
  s.start(c, o);
  const RunSummary r = runToEnd(s);
  if (r.status != RunStatus::stopped)
    qFatal("the run did not stop at step %lld: %s", static_cast<long long>(stopAt), statusName(r.status).c_str());
  return QString::fromStdString(r.runDir);
}

// A run of c stopped (as the Stop button does) after stopAt steps, then
// resumed to its end: the resumed run's summary.
inline RunSummary stopThenResume(const TrainConfig& c, int64_t stopAt) {
  Session second;
  second.resume(stoppedRun(c, stopAt).toStdString());
  return runToEnd(second);
}

}  // namespace studio::test
