// SGD (momentum, Nesterov, weight decay), Adam and AdamW steps equal
// PyTorch's torch.optim (both its default and fused=True) for several steps
// from the same start, with the learning rate changing between steps.
// Oracle: tests/reference/make_references.py with the installed torch.
#include "test_support.h"

#include "optim/optimizer.h"

using namespace studio;

namespace {

torch::Tensor tensorOf(const nlohmann::json& values, const std::vector<int64_t>& shape) {
  std::vector<float> v;
  for (const auto& x : values) v.push_back(static_cast<float>(x.get<double>()));
  return torch::from_blob(v.data(), shape, torch::kFloat32).clone();
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
      const std::string name = c["optimizer"].dump() + (c["fused"].get<bool>() ? " fused" : " foreach");
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
      cfg.kind = kind;
      Optimizer opt({p}, cfg);
      p.mutable_grad() = torch::full({4}, 0.5);
      opt.step(0.1, std::nullopt, torch::ones({}));
      QVERIFY2(torch::equal(p.detach(), torch::ones({4})), kind);
      opt.step(0.1, std::nullopt, torch::zeros({}));
      QVERIFY2(!torch::equal(p.detach(), torch::ones({4})), kind);
    }
  }
};

QTEST_GUILESS_MAIN(TestOptimizer)
#include "test_optimizer.moc"
