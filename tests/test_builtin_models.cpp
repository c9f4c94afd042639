// The built-in models against PyTorch as its users write them. The CNN pools
// each stage before its ReLU (models/model_factory.cpp), a quarter of the
// ReLU's work; its logits, loss, gradients and BatchNorm statistics must be
// those of the usual conv-BN-ReLU-pool order.
// Oracle: tests/reference/make_references.py (builtin_cnn) with the installed
// torch: the same weights and batch through nn.Sequential in the usual order.
#include "test_support.h"
#include "torch_test_support.h"

#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>

#include "models/model.h"
#include "nets/max_pool.h"
#include "studio/dataset_info.h"
#include "studio/train_config.h"

using namespace studio;
using studio::test::tensorOf;

namespace {

// The largest difference from the reference's values, relative to their
// largest magnitude (at least 1).
double offBy(const torch::Tensor& t, const nlohmann::json& values) {
  const torch::Tensor ref = tensorOf(values, {static_cast<int64_t>(values.size())});
  const torch::Tensor got = t.detach().reshape({-1}).to(torch::kFloat32);
  if (got.numel() != ref.numel()) return std::numeric_limits<double>::infinity();
  return (got - ref).abs().max().item<double>() / std::max(1.0, ref.abs().max().item<double>());
}

}  // namespace

class TestBuiltinModels : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(1); }  // as the reference ran

  void cnnEqualsTheUsualLayerOrder() {
    const auto ref = test::loadReference("builtin_cnn");
    ModelConfig mc;
    mc.kind = "cnn";
    mc.width = ref["width"].get<int>();
    mc.depth = ref["depth"].get<int>();
    auto model = makeModel(mc, InputShape{1, 28, 28, 0}, 10);
    {
      torch::NoGradGuard noGrad;
      int loaded = 0;
      for (auto& [name, t] : model->namedState()) {
        if (!ref["state"].contains(name)) continue;  // num_batches_tracked
        std::vector<int64_t> shape = ref["shapes"][name].get<std::vector<int64_t>>();
        QCOMPARE(t.sizes().vec(), shape);
        t.copy_(tensorOf(ref["state"][name], shape));
        ++loaded;
      }
      QCOMPARE(loaded, static_cast<int>(ref["state"].size()));
    }
    const torch::Tensor x = tensorOf(ref["x"], {16, 1, 28, 28});
    std::vector<int64_t> labels = ref["y"].get<std::vector<int64_t>>();
    const torch::Tensor y = torch::tensor(labels, torch::kInt64);

    model->setTraining(true);
    const torch::Tensor logits = model->forward(x);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    loss.backward();
    const double tol = 1e-5;
    QVERIFY2(offBy(logits, ref["logits"]) < tol, std::to_string(offBy(logits, ref["logits"])).c_str());
    QVERIFY(std::abs(loss.item<double>() - ref["loss"].get<double>()) < tol);
    int grads = 0;
    for (auto& [name, t] : model->namedState()) {
      if (ref["grads"].contains(name)) {
        const double d = offBy(t.grad(), ref["grads"][name]);
        QVERIFY2(d < tol, (name + ": gradient off by " + std::to_string(d)).c_str());
        ++grads;
      }
      if (ref["running"].contains(name)) {
        const double d = offBy(t, ref["running"][name]);
        QVERIFY2(d < tol, (name + ": running statistic off by " + std::to_string(d)).c_str());
      }
    }
    QCOMPARE(grads, static_cast<int>(ref["grads"].size()));

    model->setTraining(false);
    torch::NoGradGuard noGrad;
    const double d = offBy(model->forward(x), ref["eval_logits"]);
    QVERIFY2(d < tol, std::to_string(d).c_str());
  }

  // nets/max_pool.h against ATen's max_pool2d_with_indices, bit for bit: the
  // outputs, and the gradients (its backward is ATen's, given its argmax
  // indices), for both windows on planes of odd and small sizes, values with
  // ties (a window of equal values), NaNs and -inf, on one and two threads.
  void maxPoolingIsAtensBitForBit() {
    torch::manual_seed(3);
    const auto same = [](const torch::Tensor& a, const torch::Tensor& b) {
      return a.sizes() == b.sizes() && at::allclose(a, b, 0.0, 0.0, /*equal_nan=*/true);
    };
    for (int threads : {1, 2}) {
      at::set_num_threads(threads);
      for (const auto& [kernel, padding] : {std::pair<int64_t, int64_t>{2, 0}, {3, 1}}) {
        for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
                 {2, 3, 7, 9}, {1, 2, 2, 2}, {3, 4, 2, 5}, {4, 64, 33, 17}, {8, 16, 56, 56}}) {
          for (int values = 0; values < 3; ++values) {
            torch::Tensor x = values == 1 ? torch::randint(-1, 2, shape).to(torch::kFloat32) : torch::randn(shape);
            if (values == 2) {  // NaNs and -inf here and there, some windows all -inf
              x.masked_fill_(torch::rand(shape) < 0.05, std::numeric_limits<float>::quiet_NaN());
              x.masked_fill_(torch::rand(shape) < 0.3, -std::numeric_limits<float>::infinity());
            }
            const std::string what = "kernel " + std::to_string(kernel) + ", " + std::to_string(threads) +
                                     " threads, values " + std::to_string(values) + ", shape " +
                                     c10::str(c10::IntArrayRef(shape));
            const torch::Tensor a = x.clone().requires_grad_(), b = x.clone().requires_grad_();
            const torch::Tensor ours = maxPool2d(a, kernel, 2, padding);
            const torch::Tensor theirs =
                std::get<0>(at::max_pool2d_with_indices(b, {kernel, kernel}, {2, 2}, {padding, padding}));
            QVERIFY2(same(ours, theirs), what.c_str());
            const torch::Tensor g = torch::randn(ours.sizes());
            ours.backward(g);
            theirs.backward(g);
            QVERIFY2(same(a.grad(), b.grad()), ("the gradient, " + what).c_str());
            torch::NoGradGuard noGrad;
            QVERIFY2(same(maxPool2d(x, kernel, 2, padding), theirs.detach()), ("without autograd, " + what).c_str());
          }
        }
      }
    }
    at::set_num_threads(1);
    // The module: torch::nn::MaxPool2d's options; channels-last input and other windows go to ATen.
    const torch::Tensor x = torch::randn({2, 4, 9, 9});
    QVERIFY(same(MaxPool2d(2)->forward(x), torch::max_pool2d(x, 2)));
    QVERIFY(same(MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1))->forward(x),
                 torch::max_pool2d(x, 3, 2, 1)));
    QVERIFY(same(MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(1))->forward(x), torch::max_pool2d(x, 3, 1)));
    QVERIFY(same(maxPool2d(x.contiguous(torch::MemoryFormat::ChannelsLast), 2, 2, 0), torch::max_pool2d(x, 2)));
  }

  // The layers a person sees in the model summary: each stage's pooling
  // then its ReLU, at the pooled size.
  void cnnStagesPoolThenActivate() {
    ModelConfig mc;
    mc.kind = "cnn";
    mc.width = 8;
    mc.depth = 2;
    auto model = makeModel(mc, InputShape{1, 28, 28, 0}, 10);
    const auto rows = model->layers(sampleInput(InputShape{1, 28, 28, 0}, 1, torch::kCPU));
    std::vector<std::string> types;
    for (const auto& r : rows) types.push_back(r.type);
    const std::vector<std::string> want{"Conv2d",      "BatchNorm2d", "MaxPool2d", "ReLU",    "Conv2d",
                                        "BatchNorm2d", "MaxPool2d",   "ReLU",      "Flatten", "Linear"};
    QCOMPARE(types, want);
    QCOMPARE(rows[3].output, (std::vector<int64_t>{1, 8, 14, 14}));
  }
};

QTEST_GUILESS_MAIN(TestBuiltinModels)
#include "test_builtin_models.moc"
