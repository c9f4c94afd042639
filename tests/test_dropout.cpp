// The built-in models' dropout (nets/dropout.h): on the CPU its mask comes
// from Philox4x32-10 in parallel instead of PyTorch's one-at-a-time Mersenne
// Twister. What must hold:
//  - each element's uniform is ATen's own Philox engine's
//    (at::Philox4_32(seed, i / 4, 0), word i % 4), so the generator is the
//    published one, not a look-alike;
//  - the mask depends on the seed only: not on the number of threads, how
//    ATen's loop splits the tensor, the tensor's size or its dtype;
//  - it keeps each element with probability 1 - p, independently of its
//    neighbours and of the next step's mask, and scales kept ones by
//    1 / (1 - p) (so the expected output is the input);
//  - the module: nothing in evaluation or with p = 0; the gradient is the
//    mask; a seed (or a restored generator state) gives the same masks.
#include <ATen/Parallel.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <torch/utils.h>

#include <cmath>

#include "nets/dropout.h"
#include "test_support.h"

using namespace studio;

namespace {

uint32_t keepBelowFor(double p) { return static_cast<uint32_t>(std::min((1.0 - p) * 4294967296.0, 4294967295.0)); }

// The kept fraction must be within `sigmas` standard deviations of its
// expectation (a binomial proportion over n trials).
void expectProportion(double seen, double expected, int64_t n, double sigmas, const char* what) {
  const double sd = std::sqrt(expected * (1 - expected) / static_cast<double>(n));
  QVERIFY2(std::abs(seen - expected) <= sigmas * sd,
           qPrintable(QString("%1: %2 against %3 (sd %4)").arg(what).arg(seen).arg(expected).arg(sd)));
}

}  // namespace

class TestDropout : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void masksAreAtensPhilox() {
    for (const uint64_t seed : {uint64_t{0}, uint64_t{0x0123456789abcdefULL}, uint64_t{~0ULL}}) {
      const double p = 0.3;
      const torch::Tensor noise = cpuDropoutNoise({7, 131}, torch::kFloat32, p, seed).flatten();
      const auto* n = noise.data_ptr<float>();
      const float scale = static_cast<float>(1.0 / (1.0 - p));
      for (int64_t i = 0; i < noise.numel(); ++i) {
        at::Philox4_32 engine(seed, static_cast<uint64_t>(i / 4), 0);
        uint32_t u = 0;
        for (int64_t w = 0; w <= i % 4; ++w) u = engine();
        const float expected = u < keepBelowFor(p) ? scale : 0.0f;
        if (n[i] != expected)
          QFAIL(qPrintable(
              QString("seed %1, element %2: %3, ATen's Philox says %4").arg(seed).arg(i).arg(n[i]).arg(expected)));
      }
    }
  }

  void masksDependOnTheSeedOnly() {
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    const torch::Tensor one = cpuDropoutNoise({50000}, torch::kFloat32, 0.5, 42);
    at::set_num_threads(std::max(2, threads));
    const torch::Tensor several = cpuDropoutNoise({50000}, torch::kFloat32, 0.5, 42);
    at::set_num_threads(threads);
    QVERIFY(torch::equal(one, several));
    // A smaller tensor is the start of a larger one; a shape is only a shape.
    QVERIFY(torch::equal(cpuDropoutNoise({999}, torch::kFloat32, 0.5, 42), one.slice(0, 0, 999)));
    QVERIFY(torch::equal(cpuDropoutNoise({250, 200}, torch::kFloat32, 0.5, 42).flatten(), one));
    // Other dtypes keep the same elements.
    for (const auto dtype : {torch::kFloat64, torch::kBFloat16, torch::kFloat16})
      QVERIFY(torch::equal(cpuDropoutNoise({50000}, dtype, 0.5, 42).ne(0), one.ne(0)));
    QVERIFY(!torch::equal(cpuDropoutNoise({50000}, torch::kFloat32, 0.5, 43), one));
  }

  void masksKeepOneMinusPIndependently() {
    const int64_t n = 1 << 20;
    for (const double p : {0.1, 0.5, 0.9}) {
      const torch::Tensor a = cpuDropoutNoise({n}, torch::kFloat32, p, 1234);
      const torch::Tensor b = cpuDropoutNoise({n}, torch::kFloat32, p, 1235);  // the next draw's mask
      const torch::Tensor keptA = a.ne(0).to(torch::kFloat64), keptB = b.ne(0).to(torch::kFloat64);
      expectProportion(keptA.mean().item<double>(), 1 - p, n, 6, "kept");
      // Kept values are exactly 1 / (1 - p) in float; the rest exactly 0.
      const float scale = static_cast<float>(1.0 / (1.0 - p));
      QCOMPARE(a.eq(scale).sum().item<int64_t>() + a.eq(0).sum().item<int64_t>(), n);
      // Neighbours (inside a counter's 4 words, across counters and blocks
      // of 64), elements 64 apart, and the next mask: pairs kept together as
      // often as independence says.
      const double both = (1 - p) * (1 - p);
      for (const int64_t lag : {1, 4, 64}) {
        const double seen = (keptA.slice(0, 0, n - lag) * keptA.slice(0, lag, n)).mean().item<double>();
        expectProportion(seen, both, n - lag, 6, qPrintable(QString("p %1, lag %2").arg(p).arg(lag)));
      }
      expectProportion((keptA * keptB).mean().item<double>(), both, n, 6, "against the next mask");
    }
  }

  void theModuleIsDropout() {
    Dropout drop(0.25);
    const torch::Tensor x = torch::randn({64, 300});
    drop->eval();
    QCOMPARE(drop->forward(x).data_ptr(), x.data_ptr());  // evaluation: the input itself
    drop->train();
    QCOMPARE(Dropout(0.0)->forward(x).data_ptr(), x.data_ptr());

    // The gradient is the mask: with an input of ones the output is the mask.
    torch::Tensor ones = torch::ones({64, 300}, torch::requires_grad());
    torch::manual_seed(5);
    const torch::Tensor y = drop->forward(ones);
    y.sum().backward();
    QVERIFY(torch::equal(ones.grad(), y.detach()));
    const double kept = y.ne(0).to(torch::kFloat64).mean().item<double>();
    expectProportion(kept, 0.75, y.numel(), 6, "module kept");
    QVERIFY(torch::allclose(y.detach().masked_select(y.ne(0)), torch::full({1}, 1 / 0.75)));

    // A seed, or the generator's state put back, draws the same masks.
    torch::manual_seed(5);
    QVERIFY(torch::equal(drop->forward(torch::ones({64, 300})), y.detach()));
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    const torch::Tensor state = generator.get_state();
    const torch::Tensor first = drop->forward(x);
    const torch::Tensor second = drop->forward(x);
    QVERIFY(!torch::equal(first, second));
    generator.set_state(state);
    QVERIFY(torch::equal(drop->forward(x), first));

    // Its expected output is its input.
    const torch::Tensor big = torch::full({1 << 20}, 3.0);
    QVERIFY(std::abs(drop->forward(big).mean().item<double>() - 3.0) < 0.02);
    QCOMPARE(QString::fromStdString(drop->name()), QString("studio::DropoutImpl"));
  }
};

QTEST_GUILESS_MAIN(TestDropout)
#include "test_dropout.moc"
