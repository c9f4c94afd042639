// SGD (momentum, Nesterov, weight decay), Adam and AdamW steps equal
// PyTorch's torch.optim (both its default and fused=True) for several steps
// from the same start, with the learning rate changing between steps.
// Oracle: tests/reference/make_references.py with the installed torch.
// The step a CUDA graph records (learning rate and momentum in device
// scalars) equals the installed PyTorch's fused SGD kernel given the same
// values as numbers, and its cost does not grow with the parameter count.
#include "test_support.h"
#include "torch_test_support.h"

#include <map>

#include "optim/optimizer.h"
#include "train/step/op_count.h"

using namespace studio;
using studio::test::tensorOf;

namespace {

// The ATen operators one call dispatches by itself, by name (OpCount).
std::map<std::string, long> opsOf(const std::function<void()>& fn) {
  const OpCount count;
  fn();
  return count.byName();
}

long total(const std::map<std::string, long>& ops) {
  long n = 0;
  for (const auto& [name, count] : ops) n += count;
  return n;
}

std::vector<torch::Tensor> someParams(size_t n) {
  std::vector<torch::Tensor> ps;
  const std::vector<std::vector<int64_t>> shapes{{32, 1, 3, 3}, {32}, {10, 512}};
  for (size_t i = 0; i < n; ++i) ps.push_back(torch::randn(shapes[i % shapes.size()]).requires_grad_(true));
  return ps;
}

}  // namespace

class TestOptimizer : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesPyTorch_data() {
    QTest::addColumn<int>("index");
    const auto ref = test::loadReference("optimizers");
    for (size_t i = 0; i < ref["cases"].size(); ++i) {
      const auto& c = ref["cases"][i];
      const std::string name = c["optimizer"].dump() + (c["fused"].get<bool>() ? " fused" : " foreach") +
                               (c.contains("factors") ? " groups " + c["factors"].dump() : "");
      QTest::newRow(name.c_str()) << static_cast<int>(i);
    }
  }
  void matchesPyTorch() {
    QFETCH(int, index);
    const auto ref = test::loadReference("optimizers");
    const auto& c = ref["cases"][static_cast<size_t>(index)];
    std::vector<std::vector<int64_t>> shapes = ref["shapes"].get<std::vector<std::vector<int64_t>>>();
    std::vector<torch::Tensor> params;
    for (size_t i = 0; i < shapes.size(); ++i)
      params.push_back(tensorOf(ref["params0"][i], shapes[i]).requires_grad_(true));

    std::vector<ConfigError> errors;
    OptimizerConfig cfg = configFromJson({{"optimizer", c["optimizer"]}}, errors).optimizer;
    QVERIFY(errors.empty());
    Optimizer opt(params, cfg);
    if (c.contains("factors")) opt.setLrFactors(c["factors"].get<std::vector<double>>());
    const size_t steps = ref["lrs"].size();
    for (size_t s = 0; s < steps; ++s) {
      for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = tensorOf(ref["grads"][s][i], shapes[i]);
      opt.step(ref["lrs"][s].get<double>());
      opt.zeroGrad(true);
      for (size_t i = 0; i < params.size(); ++i) {
        torch::Tensor want = tensorOf(c["after"][s][i], shapes[i]);
        const double diff = (params[i].detach() - want).abs().max().item<double>();
        QVERIFY2(torch::allclose(params[i].detach(), want, 1e-5, 1e-6),
                 qPrintable(QString("step %1, param %2: max difference %3").arg(s).arg(i).arg(diff)));
      }
    }
  }

  void zeroGradToNoneOrZeros() {
    torch::Tensor p = torch::ones({3}).requires_grad_(true);
    Optimizer opt({p}, OptimizerConfig{});
    p.mutable_grad() = torch::full({3}, 2.0);
    opt.zeroGrad(false);
    QVERIFY(p.grad().defined());
    QCOMPARE(p.grad().abs().sum().item<double>(), 0.0);
    opt.zeroGrad(true);
    QVERIFY(!p.grad().defined());
  }

  void foundInfSkipsTheStep() {
    for (const char* kind : {"sgd", "adam", "adamw"}) {
      torch::Tensor p = torch::ones({4}).requires_grad_(true);
      OptimizerConfig cfg;
      cfg.kind.setName(kind);
      Optimizer opt({p}, cfg);
      p.mutable_grad() = torch::full({4}, 0.5);
      opt.step(0.1, std::nullopt, torch::ones({}));
      QVERIFY2(torch::equal(p.detach(), torch::ones({4})), kind);
      opt.step(0.1, std::nullopt, torch::zeros({}));
      QVERIFY2(!torch::equal(p.detach(), torch::ones({4})), kind);
    }
  }

  // OneCycle's momentum cycles each step; the recorded step reads it (and
  // the rate) from device scalars. 50 steps with changing values and one
  // step whose gradients hold a NaN (found_inf 1: nothing may change).
  void deviceMomentumEqualsFused_data() {
    QTest::addColumn<bool>("nesterov");
    QTest::addColumn<double>("weightDecay");
    QTest::newRow("nesterov, weight decay") << true << 5e-4;
    QTest::newRow("heavy ball, weight decay") << false << 5e-4;
    QTest::newRow("nesterov") << true << 0.0;
    QTest::newRow("heavy ball") << false << 0.0;
  }
  void deviceMomentumEqualsFused() {
    QFETCH(bool, nesterov);
    QFETCH(double, weightDecay);
    torch::manual_seed(3);
    std::vector<torch::Tensor> a = someParams(3), b;
    for (const auto& p : a) b.push_back(p.detach().clone().requires_grad_(true));
    OptimizerConfig oc;
    oc.kind = OptimizerKind::sgd;
    oc.momentum = 0.9;
    oc.nesterov = nesterov;
    oc.weight_decay = weightDecay;
    Optimizer fused(a, oc), graphable(b, oc);
    torch::Tensor lrT = torch::zeros({}), momT = torch::zeros({}), inf = torch::zeros({});
    double worst = 0;
    for (int step = 0; step < 50; ++step) {
      const double lr = 0.01 + 0.001 * step, mom = 0.95 - 0.002 * step;
      const bool bad = step == 10;
      std::vector<torch::Tensor> before;
      for (size_t i = 0; i < a.size(); ++i) {
        torch::Tensor g = torch::randn(a[i].sizes());
        if (bad) g.view(-1)[0] = std::nan("");
        a[i].mutable_grad() = g.clone();
        b[i].mutable_grad() = g.clone();
        before.push_back(b[i].detach().clone());
      }
      inf.fill_(bad ? 1.0 : 0.0);
      lrT.fill_(lr);
      momT.fill_(mom);
      fused.step(lr, mom, inf);
      graphable.step(lrT, momT, inf);
      for (size_t i = 0; i < a.size(); ++i) {
        if (bad) QVERIFY2(torch::equal(b[i].detach(), before[i]), "the skipped step changed a parameter");
        worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
      }
    }
    for (const auto& p : b) QVERIFY(p.isfinite().all().item<bool>());
    // The same update in another order of roundings: seen 1.7e-6.
    QVERIFY2(worst < 1e-5, qPrintable(QString("largest difference after 50 steps: %1").arg(worst)));
    // The momentum buffers too: one more step from equal gradients.
    for (size_t i = 0; i < a.size(); ++i) {
      a[i].mutable_grad() = torch::zeros_like(a[i]);
      b[i].mutable_grad() = torch::zeros_like(b[i]);
    }
    inf.fill_(0.0);
    fused.step(1.0, 0.5, inf);
    graphable.step(torch::ones({}), torch::full({}, 0.5), inf);
    for (size_t i = 0; i < a.size(); ++i)
      QVERIFY2((a[i] - b[i]).abs().max().item<double>() < 1e-5, "the momentum buffers differ");
  }

  // In a recorded step every kernel is replayed each step: the update with a
  // device momentum is a few passes over the parameter lists, not work per
  // tensor (it was one NaN scrub per gradient before).
  void deviceMomentumStepCostsTheSameForManyTensors() {
    for (bool nesterov : {true, false}) {
      std::map<std::string, long> few, many;
      for (size_t n : {size_t{3}, size_t{30}}) {
        std::vector<torch::Tensor> ps = someParams(n);
        OptimizerConfig oc;
        oc.kind = OptimizerKind::sgd;
        oc.momentum = 0.9;
        oc.nesterov = nesterov;
        oc.weight_decay = 5e-4;
        Optimizer opt(ps, oc);
        for (auto& p : ps) p.mutable_grad() = torch::randn(p.sizes());
        const torch::Tensor lr = torch::full({}, 0.1), mom = torch::full({}, 0.9), inf = torch::zeros({});
        (n == 3 ? few : many) = opsOf([&] { opt.step(lr, mom, inf); });
      }
      QString list;
      for (const auto& [name, count] : many) list += QString(" %1 x%2").arg(QString::fromStdString(name)).arg(count);
      qInfo("%s, 30 tensors: %ld operators:%s", nesterov ? "nesterov" : "heavy ball", total(many), qPrintable(list));
      QCOMPARE(total(many), total(few));
      QVERIFY(many.count("aten::_fused_sgd_") == 1);
      QCOMPARE(many["aten::_fused_sgd_"], nesterov ? 3L : 2L);
    }
  }
};

QTEST_GUILESS_MAIN(TestOptimizer)
#include "test_optimizer.moc"
