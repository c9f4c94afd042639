// Each technique trains: every model kind, precision (fp32, bf16, fp16 with
// loss scaling), memory format, loader mode, optimizer, schedule and
// clipping runs a few real steps on the CPU with finite, recorded figures.
// And fp16's loss scaler really skips overflowing steps inside the loop.
#include "test_support.h"

using namespace studio;

namespace {

std::vector<MetricRecord> trainRows(const std::string& runDir) {
  std::vector<MetricRecord> rows;
  auto lines = test::readLines(runDir + "/metrics.csv");
  for (size_t i = 1; i < lines.size(); ++i) {
    MetricRecord r;
    if (parseMetricsCsvRow(lines[i], r) && r.kind == RecordKind::Train) rows.push_back(r);
  }
  return rows;
}

}  // namespace

class TestTechniques : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void trains_data() {
    QTest::addColumn<QString>("overrides");
    QTest::newRow("mlp adamw cosine warm-up") << "model.kind=\"mlp\";optimizer.kind=\"adamw\";optimizer.lr=0.001;"
                                                 "schedule.kind=\"cosine\";schedule.warmup_steps=2";
    QTest::newRow("cnn bf16 channels-last") << "precision.mode=\"bf16\";performance.channels_last=true";
    QTest::newRow("cnn fp16 loss scaling") << "precision.mode=\"fp16\"";
    QTest::newRow("resnet adam step clip") << "model.kind=\"resnet\";model.depth=3;optimizer.kind=\"adam\";"
                                              "optimizer.lr=0.001;schedule.kind=\"step\";schedule.step.step_size=3;"
                                              "train.grad_clip_norm=0.5";
    QTest::newRow("workers pinned cyclic accumulation")
        << "loader.mode=\"workers\";loader.workers=2;schedule.kind=\"cyclic\";schedule.cyclic.step_size_up=2;"
           "train.accumulation_steps=3;data.augment_flip=true;data.augment_crop=2";
    QTest::newRow("sgd nesterov onecycle linear anneal, zero grad to zeros")
        << "optimizer.nesterov=true;schedule.kind=\"onecycle\";schedule.onecycle.anneal=\"linear\";"
           "schedule.onecycle.three_phase=true;performance.zero_grad_to_none=false;data.val_fraction=0.2";
  }
  void trains() {
    QFETCH(QString, overrides);
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.data.train_limit = 256;
    c.train.epochs = 0;  // the steps alone decide (accumulating 3, an epoch has 3)
    c.train.max_steps = 6;
    c.train.log_every_steps = 2;
    for (const QString& o : overrides.split(';')) applyOverride(c, o.toStdString());
    QVERIFY(validate(c).empty());
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    QVERIFY2(r.status == RunStatus::completed, r.error.c_str());
    QCOMPARE(r.steps, int64_t(6));
    QVERIFY(std::isfinite(r.test.figures["eval_accuracy"]));
    auto rows = trainRows(r.runDir);
    QCOMPARE(rows.size(), size_t(6));
    int64_t skipped = 0;
    for (const auto& row : rows) {
      QVERIFY(std::isfinite(row.trainLoss));
      // An fp16 step may overflow (inf/NaN gradient norm): then it was skipped.
      if (!std::isfinite(row.gradNorm)) QVERIFY(c.precision.mode == PrecisionMode::fp16 && row.skippedSteps > skipped);
      skipped = row.skippedSteps;
      QVERIFY(row.lr > 0);
      QCOMPARE(std::isfinite(row.lossScale), c.precision.mode == PrecisionMode::fp16);
      if (c.train.grad_clip_norm > 0) QVERIFY(row.gradNorm > 0);
    }
    QVERIFY(skipped < 6);
    // The first and last loss differ: the weights moved.
    QVERIFY(rows.front().trainLoss != rows.back().trainLoss);
    // summary.json says where the time went, and why there was no CUDA graph.
    const auto summary = nlohmann::json::parse(test::readText(r.runDir + "/summary.json"));
    QCOMPARE(summary.at("cuda_graphs").get<std::string>(), std::string("off: the run is on the CPU"));
    for (const char* k : {"setup", "training", "evaluation", "writing"})
      QVERIFY(summary.at("seconds").at(k).get<double>() >= 0);
    QVERIFY(summary.at("seconds").at("training").get<double>() > 0);
  }

  void fp16OverflowSkipsStepsAndBacksOff() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.data.train_limit = 256;
    c.train.max_steps = 4;
    c.train.log_every_steps = 1;
    c.precision.mode = PrecisionMode::fp16;
    c.precision.loss_scale.init_scale = 1e30;  // fp16 gradients overflow at once
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    QVERIFY2(r.status == RunStatus::completed, r.error.c_str());
    auto rows = trainRows(r.runDir);
    QCOMPARE(rows.size(), size_t(4));
    QCOMPARE(rows[0].skippedSteps, int64_t(1));
    QVERIFY(test::close(rows[0].lossScale, 5e29, 1e-6, 0));  // backoff 0.5
    QCOMPARE(rows[3].skippedSteps, int64_t(4));
    QCOMPARE(r.nonfinite.skippedSteps, int64_t(4));
  }
};

QTEST_GUILESS_MAIN(TestTechniques)
#include "test_techniques.moc"
