// The metric catalogue is the one description of metrics.csv: its header
// is the catalogue's columns, every field survives a row written and read
// back, and rows of another width or with garbage are refused.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/eval_report.h"
#include "studio/figure_words.h"
#include "studio/metric_catalog.h"
#include "studio/rate_text.h"

using namespace studio;

class TestMetricCatalog : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Issue 60: a slow run's rate read "0 samples/s" in the status bar and the CLI.
  void aRateKeepsTheDigitsThatMatter() {
    QCOMPARE(rateText(0.5), std::string("0.50"));
    QCOMPARE(rateText(0.0123), std::string("0.01"));
    QCOMPARE(rateText(56.78), std::string("56.8"));
    QCOMPARE(rateText(1234.4), std::string("1234"));
  }

  // Each task's figures are told by one function for the log, the CLI and
  // the window: the one the task is judged by first, then the rest of its
  // test figures, each named as the catalog labels it. A segmenter's run
  // ended in the window without its mean IoU, and an instance segmenter's
  // log and window gave its boxes' mAP where it is judged by its masks'.
  void eachTasksFiguresAreToldJudgedFirst() {
    for (size_t k = 0; k < choiceNames(TaskKind{}).size(); ++k) {  // every task, a new one too
      const auto task = static_cast<TaskKind>(k);
      const std::vector<std::string> order = taskFigureOrder(task);
      QCOMPARE(order.front(), std::string(taskScoreMetric(task)));
      Figures f;
      for (const std::string& id : taskTestFigures(task)) f.set(id, 0.25);
      const std::string words = taskFigureWords(task, f);
      QVERIFY2(words.find("eval_") == std::string::npos, words.c_str());  // every figure has a name
      size_t at = 0;
      for (const std::string& id : order) {  // each figure once, in order, with its value
        const size_t found = words.find(figureName(id) + " " + figureValue(id, 0.25), at);
        QVERIFY2(found != std::string::npos, (id + " in " + words).c_str());
        at = found + 1;
      }
      QCOMPARE(order.size(), taskTestFigures(task).size());
    }
    Figures seg;
    for (const auto& [id, v] : {std::pair{"eval_miou", 0.51234},
                                {"eval_pixel_accuracy", 0.9123},
                                {"eval_dice", 0.60119},
                                {"eval_loss", 0.30121}})
      seg.set(id, v);
    QCOMPARE(taskFigureWords(TaskKind::segmentation, seg),
             std::string("mean IoU 0.5123, pixel accuracy 91.23%, Dice (mean of classes) 0.6012, loss 0.3012"));
    // The figure it is judged by alone (the CLI's best evaluation, the window's status line); none without it.
    QCOMPARE(taskScoreWords(TaskKind::segmentation, seg), std::string("mean IoU 0.5123"));
    QCOMPARE(taskScoreWords(TaskKind::classification, seg), std::string());
    Figures masks;
    for (const auto& [id, v] :
         {std::pair{"eval_map", 0.4}, {"eval_map50", 0.6}, {"eval_mask_map", 0.35}, {"eval_mask_map50", 0.55}})
      masks.set(id, v);
    QCOMPARE(taskFigureWords(TaskKind::instance_segmentation, masks),
             std::string("mask mAP 0.3500, mask AP50 0.5500, mAP 0.4000, AP50 0.6000"));
    Figures reg;
    reg.set("eval_r2", 0.9312);
    reg.set("eval_rmse", 1234.5678);
    QCOMPARE(taskFigureWords(TaskKind::regression, reg), std::string("R\u00b2 0.9312, RMSE 1235"));
    // A detector's evaluation gives no loss: none is said.
    Figures boxes;
    boxes.set("eval_map", 0.41);
    boxes.set("eval_map50", 0.62);
    boxes.set("eval_map75", 0.44);
    QCOMPARE(taskFigureWords(TaskKind::detection, boxes), std::string("mAP 0.4100, AP50 0.6200, AP75 0.4400"));
  }

  // The CLI's line for each evaluation: the figures the record carries, in
  // the catalog's order, the weight average's left out.
  void anEvaluationRecordIsToldByItsFigures() {
    MetricRecord r;
    r.kind = RecordKind::Eval;
    r.evalLoss = 0.5;
    r.evalAccuracy = 0.875;
    r.emaEvalAccuracy = 0.9;
    QCOMPARE(evalRecordWords(r), std::string("loss 0.5000, accuracy 87.50%"));
    MetricRecord m;
    m.kind = RecordKind::Eval;
    m.evalMaskMap = 0.3;
    m.evalMap = 0.4;
    QCOMPARE(evalRecordWords(m), std::string("mAP 0.4000, mask mAP 0.3000"));
  }

  void headerIsTheCatalogue() {
    std::string want = "kind,step,epoch";
    for (const auto& m : metricCatalog()) want += std::string(",") + m.id;
    QCOMPARE(metricsCsvHeader(), want);
    QVERIFY(findMetric("eval_accuracy") && findMetric("eval_accuracy")->kind == RecordKind::Eval);
    QVERIFY(!findMetric("no_such_metric"));
    for (const auto& m : metricCatalog()) QVERIFY2((m.real == nullptr) != (m.whole == nullptr), m.id);
  }

  // Issue 57: the catalog judges every evaluation figure: which way is
  // better and which tasks record it; an unknown id is an error naming the
  // known ones (never a fall-back to accuracy).
  void everyEvaluationFigureIsJudged() {
    for (const auto& m : metricCatalog()) {
      if (m.kind != RecordKind::Eval) continue;
      QVERIFY2(m.better != Better::None && m.tasks != 0 && *m.figureOf, m.id);
      QVERIFY2(m.real, m.id);  // a real-valued field: evaluation records and their lines read it so
      for (TaskKind t : {TaskKind::classification, TaskKind::regression, TaskKind::multilabel, TaskKind::detection,
                         TaskKind::segmentation, TaskKind::instance_segmentation})
        QCOMPARE(metricTaskProblem(m.id, t).empty(), m.recordedBy(t));
    }
    for (const char* lower : {"eval_loss", "eval_rmse", "eval_mae", "eval_ece", "ema_eval_loss", "train_loss"})
      QVERIFY2(lowerIsBetter(lower), lower);
    for (const char* higher : {"eval_accuracy", "eval_r2", "eval_map", "eval_map50", "eval_f1", "eval_auc",
                               "eval_mask_map", "eval_mask_map50"})
      QVERIFY2(!lowerIsBetter(higher), higher);
    try {
      lowerIsBetter("eval_acc");
      QFAIL("an unknown metric was judged");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("eval_acc is not an evaluation figure: give eval_loss, eval_accuracy") !=
                   std::string::npos,
               e.what());
    }
    QCOMPARE(taskEvalMetrics(TaskKind::detection), (std::vector<std::string>{"eval_map", "eval_map50"}));
    // Instance segmentation: the boxes' figures and the masks' (COCO's segm), its score the masks' mAP.
    QCOMPARE(taskEvalMetrics(TaskKind::instance_segmentation),
             (std::vector<std::string>{"eval_map", "eval_map50", "eval_mask_map", "eval_mask_map50"}));
    QCOMPARE(std::string(taskScoreMetric(TaskKind::instance_segmentation)), std::string("eval_mask_map"));
    QCOMPARE(metricTaskProblem("eval_mask_map", TaskKind::detection),
             std::string("eval_mask_map is a per-instance mask figure; task.kind is detection: use eval_map or "
                         "eval_map50"));
    QCOMPARE(taskEvalMetrics(TaskKind::regression),
             (std::vector<std::string>{"eval_loss", "eval_r2", "eval_rmse", "eval_mae"}));
    QCOMPARE(metricTaskProblem("eval_rmse", TaskKind::classification),
             std::string("eval_rmse is a regression figure; task.kind is classification: use eval_loss, "
                         "eval_accuracy, eval_auc or eval_ece"));
  }

  void everyFieldRoundTrips() {
    MetricRecord r;
    r.kind = RecordKind::Eval;
    r.step = 1234567890123;
    r.epoch = 42;
    double v = 0.5;
    for (const auto& m : metricCatalog()) {
      if (m.whole)
        r.*m.whole = 77;
      else
        r.*m.real = (v *= 1.7);
    }
    r.lossScale = MetricRecord::kNone;  // an empty cell reads back as none
    MetricRecord back;
    QVERIFY(parseMetricsCsvRow(metricsCsvRow(r), back));
    QCOMPARE(back.kind, r.kind);
    QCOMPARE(back.step, r.step);
    QCOMPARE(back.epoch, r.epoch);
    for (const auto& m : metricCatalog()) {
      if (std::isnan(m.value(r)))
        QVERIFY2(std::isnan(m.value(back)), m.id);
      else
        QVERIFY2(std::fabs(m.value(back) - m.value(r)) <= 1e-8 * std::fabs(m.value(r)), m.id);
    }
  }

  void evalReportsAreReadWithTheirTypesChecked() {
    // A report as the engine writes it reads back, per-class figures recomputed.
    EvalReport r;
    r.step = 8;
    r.split = "test";
    r.classes = {"a", "b"};
    r.confusion = {{3, 1}, {0, 4}};
    computeClassFigures(r);
    QCOMPARE(r.accuracy, 7.0 / 8.0);
    QCOMPARE(r.perClass[0].recall, 0.75);
    QCOMPARE(r.perClass[1].precision, 0.8);
    const EvalReport back = evalReportFromJson(toJson(r), "r.json");
    QCOMPARE(back.confusion, r.confusion);
    QCOMPARE(back.perClass[1].f1, r.perClass[1].f1);
    // Found by fuzz_run_files: a step of 1e20 (nlohmann's own conversion is
    // undefined behaviour), a matrix of the wrong shape, a negative count.
    for (const char* bad : {R"({"step": 1e20, "epoch": 0, "split": "t", "classes": ["a"], "confusion": [[1]]})",
                            R"({"step": 1, "epoch": 0, "split": "t", "classes": ["a", "b"], "confusion": [[1]]})",
                            R"({"step": 1, "epoch": 0, "split": "t", "classes": ["a"], "confusion": [[-5]]})"}) {
      bool refused = false;
      try {
        evalReportFromJson(nlohmann::json::parse(bad), "bad.json");
      } catch (const InputError& e) {
        refused = std::string(e.what()).find("bad.json") != std::string::npos;
      }
      QVERIFY2(refused, bad);
    }
  }

  void badRowsAreRefused() {
    MetricRecord r;
    const std::string good = metricsCsvRow(r);
    MetricRecord out;
    QVERIFY(parseMetricsCsvRow(good, out));
    QVERIFY(!parseMetricsCsvRow(good + ",1", out));
    QVERIFY(!parseMetricsCsvRow("train,1,0", out));
    QVERIFY(!parseMetricsCsvRow("weird" + good.substr(5), out));
    std::string garbage = good;
    garbage.replace(garbage.find(",0,"), 3, ",0x,");
    QVERIFY(!parseMetricsCsvRow(garbage, out));
  }
};

QTEST_GUILESS_MAIN(TestMetricCatalog)
#include "test_metric_catalog.moc"
