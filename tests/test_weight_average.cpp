// train.ema: the moving average of a residual network's weights and
// BatchNorm statistics over 50 real training steps equals PyTorch's
// AveragedModel with get_ema_multi_avg_fn (tests/reference/ema_reference.py,
// fed the run's own per-step checkpoints); it is evaluated beside the raw
// weights (its own metrics.csv columns), survives a resume bit for bit and
// is what export --which ema writes. A metrics.csv from before those columns
// existed still loads and is continued in the new columns.
#include "test_support.h"
#include "torch_test_support.h"

using namespace studio;

namespace {

TrainConfig emaConfig(const QString& out) {
  TrainConfig c = test::smallConfig(out);  // 16 steps an epoch
  c.model.kind = "resnet";
  c.model.width = 4;
  c.model.depth = 1;
  c.data.test_limit = 64;
  c.train.epochs = 4;
  c.train.max_steps = 50;
  c.train.ema.decay = 0.9;
  c.train.ema.every_steps = 2;
  c.train.ema.start_step = 10;
  c.optimizer.lr = 0.05;
  return c;
}

std::vector<MetricRecord> evalRows(const std::string& runDir) { return test::metricRows(runDir, RecordKind::Eval); }

std::map<std::string, torch::Tensor> averageOf(const std::string& runDir) {
  TrainConfig cfg = readRunSettings(runDir);
  const nlohmann::json info = test::runInfo(runDir);
  auto model = makeModel(cfg.model, inputShapeFromRunInfo(info),
                         static_cast<int64_t>(info[run_files::run_info::kClasses].size()));
  loadModelWeights(runDir + "/checkpoints/last.ckpt", *model, /*ema=*/true);
  return test::stateOf(*model);
}

}  // namespace

class TestWeightAverage : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void equalsAveragedModel() {
    QTemporaryDir dir;
    TrainConfig c = emaConfig(dir.path());
    c.evaluation.every_steps = 1;  // each step's weights kept as checkpoints/step-N.ckpt
    c.output.keep_checkpoints = true;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QCOMPARE(r.steps, int64_t(50));

    QStringList args{"0.9", QString::fromStdString(r.runDir + "/checkpoints/last.ckpt")};
    for (int step = 10; step <= 50; step += 2)
      args << QString::fromStdString(r.runDir + "/" + run_files::stepCheckpoint(step));
    const auto py = test::python("ema_reference.py", args);
    QVERIFY2(py.code == 0, qPrintable(py.output));
    QVERIFY2(py.output.contains("ema of 21 updates"), qPrintable(py.output));

    // Two evaluation curves: the average's from its first update on.
    const auto rows = evalRows(r.runDir);
    QCOMPARE(rows.size(), size_t(50));
    for (const auto& e : rows) {
      QVERIFY(std::isfinite(e.evalAccuracy));
      QCOMPARE(std::isfinite(e.emaEvalAccuracy) && std::isfinite(e.emaEvalLoss), e.step >= 10);
    }
    QVERIFY(std::isfinite(r.test.ema["eval_accuracy"]));
    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary["ema"]["test_accuracy"].get<double>(), r.test.ema["eval_accuracy"]);
    // At the last step the average evaluated on the test set is the summary's.
    QCOMPARE(rows.back().emaEvalAccuracy, r.test.ema["eval_accuracy"]);
  }

  void survivesResumeAndExports() {
    QTemporaryDir dir;
    TrainConfig c = emaConfig(dir.path());
    Session whole;
    whole.start(c);
    const RunSummary a = test::runToEnd(whole);
    QCOMPARE(statusName(a.status), std::string("completed"));

    Session first;
    StartOptions stop;
    stop.stopAtStep = 25;
    first.start(c, stop);
    const RunSummary b1 = test::runToEnd(first);
    QCOMPARE(statusName(b1.status), std::string("stopped"));
    Session second;
    second.resume(b1.runDir);
    const RunSummary b2 = test::runToEnd(second);
    QCOMPARE(statusName(b2.status), std::string("completed"));

    const auto ea = averageOf(a.runDir), eb = averageOf(b2.runDir);
    QCOMPARE(ea.size(), eb.size());
    for (const auto& [name, t] : ea) QVERIFY2(torch::equal(t, eb.at(name)), name.c_str());
    QCOMPARE(b2.test.ema["eval_accuracy"], a.test.ema["eval_accuracy"]);
    // The average is not the weights.
    auto raw = test::stateOf(*test::weightsOf(a.runDir));
    QVERIFY(!torch::equal(raw.at(ea.begin()->first), ea.begin()->second));

    const QString out = dir.path() + "/exported";
    const ExportResult x = exportRun(a.runDir, out.toStdString(), "ema");
    QCOMPARE(x.checkpoint, std::string("ema"));
    const auto py = test::python("same_tensors.py",
                                 {out + "/model.pt", QString::fromStdString(a.runDir + "/checkpoints/last.ckpt:ema")});
    QVERIFY2(py.code == 0, qPrintable(py.output));

    // A run without an average says so.
    TrainConfig plain = emaConfig(dir.path());
    plain.train.ema.decay = 0;
    plain.train.max_steps = 4;
    Session p;
    p.start(plain);
    const RunSummary pr = test::runToEnd(p);
    QVERIFY(!std::isfinite(pr.test.ema["eval_accuracy"]));
    try {
      exportRun(pr.runDir, (dir.path() + "/none").toStdString(), "ema");
      QFAIL("expected an error");
    } catch (const CheckpointError& e) {
      QVERIFY2(std::string(e.what()).find("holds no weight average") != std::string::npos, e.what());
    }
  }

  // metrics.csv from before the average's columns: it loads (they read as
  // none), and a resume writes it again in today's columns, rows kept.
  void oldMetricsFileLoadsAndContinues() {
    QTemporaryDir dir;
    TrainConfig c = emaConfig(dir.path());
    c.train.ema.decay = 0;
    Session first;
    StartOptions stop;
    stop.stopAtStep = 20;
    first.start(c, stop);
    const RunSummary b1 = test::runToEnd(first);
    QCOMPARE(statusName(b1.status), std::string("stopped"));

    // Drop the two newest columns, as an older studio wrote the file.
    const std::string path = b1.runDir + "/metrics.csv";
    auto lines = test::readLines(path);
    std::string old;
    for (const auto& line : lines) {
      std::string cut = line;
      for (int i = 0; i < 2; ++i) cut = cut.substr(0, cut.rfind(','));
      old += cut + "\n";
    }
    QVERIFY(lines.front().find(",ema_eval_loss,ema_eval_accuracy") != std::string::npos);
    {
      std::ofstream f(path, std::ios::trunc);
      f << old;
    }
    const auto oldColumns = metricsCsvColumns(test::readLines(path).front());
    QVERIFY(oldColumns.has_value());
    MetricRecord r;
    QVERIFY(parseMetricsCsvRow(test::readLines(path)[1], r, *oldColumns));
    QVERIFY(!parseMetricsCsvRow(test::readLines(path)[1], r));  // not in today's layout
    QVERIFY(std::isnan(r.emaEvalLoss) && std::isfinite(r.trainLoss));

    Session second;
    second.resume(b1.runDir);
    QCOMPARE(statusName(test::runToEnd(second).status), std::string("completed"));
    const auto now = test::readLines(path);
    QCOMPARE(now.front(), metricsCsvHeader());
    int rows = 0;
    for (size_t i = 1; i < now.size(); ++i) {
      QVERIFY2(parseMetricsCsvRow(now[i], r), now[i].c_str());
      if (r.kind == RecordKind::Train) ++rows;
    }
    QCOMPARE(rows, 50);
  }
};

QTEST_GUILESS_MAIN(TestWeightAverage)
#include "test_weight_average.moc"
