#pragma once
// The built-in models' dropout: the same as torch::nn::Dropout (scaled by
// 1 / (1 - p) while training, nothing in evaluation), with a faster mask on
// the CPU.
//
// Why: PyTorch's CPU dropout draws each element's Bernoulli variable from the
// Mersenne Twister one at a time, on one thread (its MKL path is taken on
// Intel processors only): 241 us for a 128 x 256 batch on the 2-core
// development VM, the largest cost of the fashion-mnist-mlp step after the
// matrix products. Here each block of 64 elements takes its uniforms from
// Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy as
// 1, 2, 3"; the counter-based generator PyTorch uses on CUDA) keyed by one
// 64-bit draw from the default CPU generator and counted by the block's
// index: vectorisable, spread over the intra-op threads by ATen's own
// parallel loop, the same masks for any number of threads, and reproduced
// exactly when the generator's state is restored (resume, activation
// checkpointing's recomputation, out-of-memory back-off). 4x faster for that
// batch (bench/RESULTS.md).
//
// On other devices it is torch::dropout (CUDA's is fused and counter-based
// already).

#include <cstdint>
#include <ostream>

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace studio {

class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(double p = 0.5);
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);
  double p;
};
TORCH_MODULE(Dropout);

// The mask, already scaled: 0 with probability p, else 1 / (1 - p), in the
// dtype and on the CPU, for `shape`; from the Philox key `seed`. The same
// seed gives the same mask. (Exposed for the tests.)
torch::Tensor cpuDropoutNoise(torch::IntArrayRef shape, torch::ScalarType dtype, double p, uint64_t seed);

}  // namespace studio
