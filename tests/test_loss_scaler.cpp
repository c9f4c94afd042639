// Dynamic loss scaling follows GradScaler: growth after N clean steps,
// backoff and a skipped step on inf or NaN, for a scripted run, compared
// with torch.amp.GradScaler("cpu") on the same gradients.
#include "test_support.h"

#include "optim/loss_scaler.h"
#include "optim/optimizer.h"

using namespace studio;

class TestLossScaler : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesGradScaler() {
    const auto ref = test::loadReference("loss_scaler");
    LossScaleConfig cfg;
    cfg.init_scale = ref["config"]["init_scale"].get<double>();
    cfg.growth_factor = ref["config"]["growth_factor"].get<double>();
    cfg.backoff_factor = ref["config"]["backoff_factor"].get<double>();
    cfg.growth_interval = ref["config"]["growth_interval"].get<int>();
    auto vec = [](const nlohmann::json& j) {
      std::vector<float> v;
      for (const auto& x : j) v.push_back(static_cast<float>(test::number(x)));
      return torch::tensor(v);
    };
    torch::Tensor p = vec(ref["params0"]).requires_grad_(true);
    OptimizerConfig oc;
    oc.momentum = 0;
    Optimizer opt({p}, oc);
    LossScaler scaler(cfg, torch::Device(torch::kCPU), true);
    const double lr = ref["lr"].get<double>();
    int64_t skippedTotal = 0;
    for (size_t s = 0; s < ref["pattern"].size(); ++s) {
      torch::Tensor g = vec(ref["grads"][s]);
      // d/dp (p . g) = g, scaled as backward() of the scaled loss leaves it.
      torch::Tensor loss = (p * g).sum();
      scaler.scale(loss).backward();
      torch::Tensor before = p.detach().clone();
      scaler.unscale(opt.grads());
      opt.step(lr, std::nullopt, scaler.foundInf());
      const bool skipped = torch::equal(before, p.detach());
      skippedTotal += skipped;
      scaler.update();
      opt.zeroGrad(true);
      QCOMPARE(skipped, ref["skipped"][s].get<bool>());
      QCOMPARE(scaler.scaleTensor().item<double>(), ref["scales"][s].get<double>());
      QVERIFY2(torch::allclose(p.detach(), vec(ref["params"][s]), 1e-6, 1e-7),
               qPrintable(QString("step %1 (%2)").arg(s).arg(QString::fromStdString(ref["pattern"][s]))));
    }
    QVERIFY(skippedTotal >= 3);
  }

  void disabledIsAPassThrough() {
    LossScaler scaler(LossScaleConfig{}, torch::Device(torch::kCPU), false);
    torch::Tensor loss = torch::tensor(3.0f);
    QCOMPARE(scaler.scale(loss).item<float>(), 3.0f);
    QCOMPARE(scaler.scaleTensor().item<float>(), 1.0f);
  }
};

QTEST_GUILESS_MAIN(TestLossScaler)
#include "test_loss_scaler.moc"
