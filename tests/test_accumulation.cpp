// Gradient accumulation: k micro-batches of size b give the same gradients
// as one batch of k*b (a model without batch norm), and the same parameters
// after the step, also for a short last group at the end of an epoch.
// Both runs see the same samples per step: batch i of size k*b is exactly
// micro-batches k*i .. k*i+k-1 of size b of the same epoch order.
#include "test_support.h"
#include "torch_test_support.h"

using namespace studio;

namespace {

TrainConfig mlpConfig(const QString& out, int batch, int accumulation) {
  TrainConfig c = test::smallConfig(out);
  c.model.kind = "mlp";
  c.model.width = 32;
  c.model.depth = 2;
  c.data.train_limit = 1000;  // 1000 = 3 * 256 + 232: the last group is short
  c.train.batch_size = batch;
  c.train.accumulation_steps = accumulation;
  c.optimizer.kind = OptimizerKind::sgd;
  c.optimizer.momentum = 0;
  c.optimizer.lr = 1.0;  // with plain SGD at lr 1, params_before - params_after = gradient
  return c;
}

std::vector<torch::Tensor> flat(const std::unique_ptr<Model>& m) {
  std::vector<torch::Tensor> v;
  for (const auto& p : m->parameters()) v.push_back(p.detach().clone());
  return v;
}

}  // namespace

class TestAccumulation : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void accumulatedEqualsOneBigBatch_data() {
    QTest::addColumn<int>("steps");
    QTest::newRow("one step") << 1;
    QTest::newRow("whole epoch, short last group") << 4;
  }
  void accumulatedEqualsOneBigBatch() {
    QFETCH(int, steps);
    QTemporaryDir dir;
    std::vector<std::string> runs;
    std::vector<RunSummary> summaries;
    for (auto [batch, acc] : {std::pair{256, 1}, std::pair{64, 4}}) {
      TrainConfig c = mlpConfig(dir.path() + "/" + QString::number(acc), batch, acc);
      c.train.max_steps = steps;
      Session s;
      s.start(c);
      summaries.push_back(test::runToEnd(s));
      QCOMPARE(statusName(summaries.back().status), std::string("completed"));
      QCOMPARE(summaries.back().steps, int64_t(steps));
      runs.push_back(summaries.back().runDir);
    }
    // The starting weights are the seed's; the runs differ only in how the
    // gradient was accumulated.
    auto big = flat(test::weightsOf(runs[0]));
    auto small = flat(test::weightsOf(runs[1]));
    QCOMPARE(big.size(), small.size());
    for (size_t i = 0; i < big.size(); ++i) {
      const double diff = (big[i] - small[i]).abs().max().item<double>();
      QVERIFY2(torch::allclose(big[i], small[i], 1e-5, 1e-6),
               qPrintable(QString("parameter %1 differs by %2").arg(i).arg(diff)));
    }
    // The recorded per-step losses (means over the group's samples) agree too.
    auto a = test::readLines(runs[0] + "/metrics.csv");
    auto b = test::readLines(runs[1] + "/metrics.csv");
    int compared = 0;
    for (size_t i = 1; i < std::min(a.size(), b.size()); ++i) {
      MetricRecord ra, rb;
      QVERIFY(parseMetricsCsvRow(a[i], ra) && parseMetricsCsvRow(b[i], rb));
      if (ra.kind != RecordKind::Train) continue;
      QCOMPARE(ra.step, rb.step);
      QVERIFY2(test::close(rb.trainLoss, ra.trainLoss, 1e-5, 1e-6), qPrintable(QString::fromStdString(b[i])));
      QVERIFY2(test::close(rb.gradNorm, ra.gradNorm, 1e-4, 1e-6), qPrintable(QString::fromStdString(b[i])));
      ++compared;
    }
    QCOMPARE(compared, steps);
  }

  void gradientIsNotMultipliedByK() {
    // A wrong loss division (not by the group) would make the accumulated
    // step k times larger; compare the step's size with the big batch's.
    QTemporaryDir dir;
    TrainConfig c = mlpConfig(dir.path(), 64, 4);
    c.train.max_steps = 1;
    Session s;
    s.start(c);
    RunSummary r = test::runToEnd(s);
    TrainConfig init = c;
    init.train.max_steps = 1;
    init.optimizer.lr = 1e-12;  // effectively the initial weights
    Session s0;
    s0.start(init);
    RunSummary r0 = test::runToEnd(s0);
    auto w1 = flat(test::weightsOf(r.runDir));
    auto w0 = flat(test::weightsOf(r0.runDir));
    double sq = 0;
    for (size_t i = 0; i < w1.size(); ++i) sq += (w0[i] - w1[i]).pow(2).sum().item<double>();
    auto rows = test::readLines(r.runDir + "/metrics.csv");
    MetricRecord rec;
    QVERIFY(parseMetricsCsvRow(rows[1], rec));
    // With lr 1 the update is the gradient, whose norm is recorded.
    QVERIFY2(test::close(std::sqrt(sq), rec.gradNorm, 1e-3, 1e-6),
             qPrintable(QString("update norm %1, grad norm %2").arg(std::sqrt(sq)).arg(rec.gradNorm)));
  }
};

QTEST_GUILESS_MAIN(TestAccumulation)
#include "test_accumulation.moc"
