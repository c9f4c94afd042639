// summary.json has one codec (studio/run_summary.h): every reader of the
// file (the launcher, the audit, continue, the checkpoint chooser, the model
// card, the runs table) goes through it. Issue 57: figures are keyed by
// metric id; each task writes its own figures, every summary the three that
// older readers expect; a value of the wrong type reads as absent and is
// named; a file that is no JSON object, or no regular file, is unreadable.
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"
#include "studio/metric_catalog.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"

using namespace studio;
using nlohmann::json;

namespace {
std::set<std::string> figureKeys(const json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items())
    if (k.rfind("test_", 0) == 0 || k.rfind("best_eval_", 0) == 0) keys.insert(k);
  keys.erase("test_weights");
  return keys;
}

RunSummary finished(TaskKind task) {
  RunSummary s;
  s.status = RunStatus::completed;
  s.task = task;
  s.steps = 40;
  s.totalSteps = 40;
  double v = 0.5;
  for (const auto& id : taskTestFigures(task)) s.test.figures.set(id, v += 0.01);
  s.bestEval.set(taskScoreMetric(task), 0.75);
  s.test.weights = "best";
  s.test.weightsStep = 30;
  s.test.last.set(taskScoreMetric(task), 0.7);
  return s;
}
}  // namespace

class TestRunSummary : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aFigureIsKeyedByACatalogId() {
    Figures f;
    QVERIFY(std::isnan(f["eval_accuracy"]));
    f.set("eval_accuracy", 0.9);
    QCOMPARE(f["eval_accuracy"], 0.9);
    QVERIFY(f.has("eval_accuracy"));
    f.set("eval_accuracy", MetricRecord::kNone);  // NaN removes it
    QVERIFY(!f.has("eval_accuracy") && f.empty());
    f.set("eval_map75", 0.3);  // a detector's, which no evaluation records
    QCOMPARE(f["eval_map75"], 0.3);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, f["eval_acuracy"]);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, f.set("train_loss", 1.0));
    QCOMPARE(testKey("eval_map50"), std::string("test_map50"));
    QCOMPARE(bestKey("eval_r2"), std::string("best_eval_r2"));
  }

  // The keys each task's summary.json has had since its task was added
  // (docs/run-folder.md): the three every summary has, then the task's.
  void eachTaskWritesItsFigures() {
    const std::set<std::string> every{"test_accuracy", "test_loss", "best_eval_accuracy"};
    auto with = [&](std::set<std::string> more) {
      more.insert(every.begin(), every.end());
      return more;
    };
    QCOMPARE(figureKeys(summaryJson(finished(TaskKind::classification))), every);
    QCOMPARE(figureKeys(summaryJson(finished(TaskKind::regression))),
             with({"test_r2", "test_rmse", "test_mae", "best_eval_r2"}));
    QCOMPARE(figureKeys(summaryJson(finished(TaskKind::multilabel))), with({"test_map", "test_f1", "best_eval_map"}));
    QCOMPARE(figureKeys(summaryJson(finished(TaskKind::detection))),
             with({"test_map", "test_map50", "test_map75", "best_eval_map"}));
    // A figure the task has not is null; the last weights' loss and scores.
    const json det = summaryJson(finished(TaskKind::detection));
    QVERIFY(det["test_accuracy"].is_null());
    QCOMPARE(det["test_map75"].get<double>(), 0.53);
    QCOMPARE(det["best_eval_map"].get<double>(), 0.75);
    QCOMPARE(det["last_weights"]["test_map"].get<double>(), 0.7);
    QVERIFY(det["last_weights"].contains("test_r2") && det["last_weights"]["test_loss"].is_null());
    QCOMPARE(det["test_weights"]["which"].get<std::string>(), std::string("best"));
  }

  void whatIsWrittenReadsBack() {
    for (const TaskKind task :
         {TaskKind::classification, TaskKind::regression, TaskKind::multilabel, TaskKind::detection}) {
      RunSummary s = finished(task);
      s.test.ema.set("eval_accuracy", 0.61);
      s.test.ema.set("eval_loss", 1.2);
      s.earlyStopping = {"eval_loss", 0.4, 30, "no improvement"};
      s.batchFind.tried = {{1, true}, {2, false}};
      s.batchFind.micro = 1;
      const json j = summaryJson(s);
      std::vector<std::string> wrong;
      const RunSummary back = summaryFromJson(j, &wrong);
      QVERIFY(wrong.empty());
      QCOMPARE(back.test.figures, s.test.figures);
      QCOMPARE(back.bestEval, s.bestEval);
      QCOMPARE(back.test.ema, s.test.ema);
      QCOMPARE(back.test.weights, std::string("best"));
      QCOMPARE(back.test.weightsStep, int64_t{30});
      QCOMPARE(back.earlyStopping.bestStep, int64_t{30});
      QCOMPARE(back.batchFind.tried, s.batchFind.tried);
      QCOMPARE(summaryJson(back), j);  // the file read back writes the same file
    }
  }

  void aValueOfTheWrongTypeIsNamedAndReadsAsAbsent() {
    std::vector<std::string> wrong;
    const RunSummary s = summaryFromJson(
        json{{"status", 3}, {"steps", "many"}, {"test_accuracy", "high"}, {"test_weights", {{"which", 1}}}}, &wrong);
    QVERIFY(!s.status && s.steps == 0 && s.test.figures.empty());
    QCOMPARE(wrong, (std::vector<std::string>{"status", "steps", "test_accuracy", "test_weights.which"}));
    QCOMPARE(s.test.weights, std::string());  // not said
  }

  // Each status by its summary.json name, "early-stopped" with its hyphen;
  // a name that is none of them reads as unset, never as another status.
  void aStatusIsReadByItsName() {
    for (const auto& [name, status] :
         std::vector<std::pair<std::string, RunStatus>>{{"completed", RunStatus::completed},
                                                        {"early-stopped", RunStatus::early_stopped},
                                                        {"stopped", RunStatus::stopped},
                                                        {"failed", RunStatus::failed}}) {
      const RunSummary s = summaryFromJson(json{{"status", name}}, nullptr);
      QVERIFY2(s.status == status, name.c_str());
      QCOMPARE(summaryJson(s)["status"].get<std::string>(), name);
    }
    QVERIFY(!summaryFromJson(json{{"status", "early_stopped"}}, nullptr).status);
    QVERIFY(!summaryFromJson(json{{"status", "finished"}}, nullptr).status);
  }

  void aFileIsMissingUnreadableOrRead() {
    QTemporaryDir dir;
    const std::string run = dir.path().toStdString();
    QCOMPARE(readSummaryFile(run).state, SummaryFile::State::Missing);
    QCOMPARE(readSummaryFile(run).summary.runDir, run);
    const std::string path = run + "/" + run_files::kSummary;
    writeFileAtomically(path, "[1, 2]");
    QCOMPARE(readSummaryFile(run).state, SummaryFile::State::Unreadable);
    std::filesystem::remove(path);
    QCOMPARE(::mkfifo(path.c_str(), 0600), 0);  // read, it would hang
    const SummaryFile fifo = readSummaryFile(run);
    QCOMPARE(fifo.state, SummaryFile::State::Unreadable);
    QVERIFY2(fifo.problem.find(run_files::kSummary) != std::string::npos, fifo.problem.c_str());
    std::filesystem::remove(path);
    writeSummaryFile(run, finished(TaskKind::regression));
    const SummaryFile read = readSummaryFile(run);
    QVERIFY(read.read());
    QCOMPARE(statusName(read.summary.status), std::string("completed"));
    QCOMPARE(read.summary.bestEval["eval_r2"], 0.75);
    QVERIFY(finishedStatus(read.summary.status) && finishedStatus(RunStatus::early_stopped) &&
            !finishedStatus(RunStatus::stopped) && !finishedStatus(std::nullopt));
  }
};

QTEST_GUILESS_MAIN(TestRunSummary)
#include "test_run_summary.moc"
