#include "nets/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/Generator.h>
#include <torch/nn/functional/dropout.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace studio {
namespace {

constexpr int kLanes = 16;              // counters per block, computed together
constexpr int64_t kBlock = 4 * kLanes;  // uniforms per block (4 per counter)

// Philox4x32-10 (Salmon, Moraes, Dror, Shaw 2011) on 16 counters at once, in
// a structure of arrays so that the compiler vectorises the lanes. The
// rounds, constants and layout are ATen's PhiloxRNGEngine's: element i is
// word i % 4 of at::Philox4_32(seed, /*subsequence=*/i / 4, 0)'s first
// output (the test compares the two).
void philox(uint32_t c0[kLanes], uint32_t c1[kLanes], uint32_t c2[kLanes], uint32_t c3[kLanes], uint32_t k0,
            uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    for (int j = 0; j < kLanes; ++j) {
      const uint64_t p0 = uint64_t{0xD2511F53u} * c0[j], p1 = uint64_t{0xCD9E8D57u} * c2[j];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[j] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[j] ^ k1;
      c1[j] = static_cast<uint32_t>(p1);
      c3[j] = static_cast<uint32_t>(p0);
      c0[j] = n0;
      c2[j] = n2;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

template <typename T>
void fill(T* out, int64_t begin, int64_t end, uint32_t keepBelow, T scale, uint64_t seed) {
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t block = begin / kBlock; block * kBlock < end; ++block) {
    alignas(64) uint32_t c[4][kLanes];
    for (int j = 0; j < kLanes; ++j) {
      const uint64_t counter = static_cast<uint64_t>(block) * kLanes + static_cast<uint64_t>(j);
      c[0][j] = 0;
      c[1][j] = 0;
      c[2][j] = static_cast<uint32_t>(counter);
      c[3][j] = static_cast<uint32_t>(counter >> 32);
    }
    philox(c[0], c[1], c[2], c[3], k0, k1);
    const int64_t first = block * kBlock;
    const int64_t from = std::max(begin, first), to = std::min(end, first + kBlock);
    for (int64_t i = from; i < to; ++i) {
      const int64_t r = i - first;
      out[i] = c[r & 3][r >> 2] < keepBelow ? scale : T(0);
    }
  }
}

}  // namespace

torch::Tensor cpuDropoutNoise(torch::IntArrayRef shape, torch::ScalarType dtype, double p, uint64_t seed) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument("dropout's probability must be in [0, 1)");
  torch::Tensor noise = torch::empty(shape, torch::TensorOptions().dtype(dtype).device(torch::kCPU));
  // P(u < keepBelow) = keepBelow / 2^32 = 1 - p, to within 2^-32.
  const auto keepBelow = static_cast<uint32_t>(std::min((1.0 - p) * 4294967296.0, 4294967295.0));
  // ATen's element loop splits the (contiguous) tensor over the intra-op
  // threads; each piece finds its elements' indices from its pointer, so
  // the mask does not depend on how it was split.
  at::TensorIterator iter = at::TensorIterator::borrowing_nullary_op(noise);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "cpuDropoutNoise", [&] {
    auto* base = noise.data_ptr<scalar_t>();
    const auto scale = static_cast<scalar_t>(1.0 / (1.0 - p));
    auto loop = [&](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
      for (int64_t j = 0; j < size1; ++j) {
        auto* first = reinterpret_cast<scalar_t*>(data[0] + j * strides[1]);
        const int64_t begin = first - base;
        fill(base, begin, begin + size0, keepBelow, scale, seed);
      }
    };
#if defined(STUDIO_SANITIZED_THREAD)  // the tsan preset (CMakeLists.txt)
    // ThreadSanitizer cannot see libgomp's (uninstrumented) barriers: it
    // would take the workers' writes and the engine thread's later free of
    // the mask for a race. The same mask, made on this thread.
    iter.serial_for_each(loop, {0, iter.numel()});
#else
    iter.for_each(loop, /*grain_size=*/4096);
#endif
  });
  return noise;
}

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("dropout's probability must be in [0, 1]");
}

void DropoutImpl::pretty_print(std::ostream& stream) const { stream << "Dropout(p=" << p << ")"; }

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p == 0) return x;
  if (!x.device().is_cpu() || p >= 1 || !at::isFloatingType(x.scalar_type()))
    return torch::dropout(x, p, /*train=*/true);
  uint64_t seed = 0;
  {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    seed = at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
  }
  // As PyTorch's CPU dropout: input * noise, whose backward is grad * noise.
  return x * cpuDropoutNoise(x.sizes(), x.scalar_type(), p, seed);
}

}  // namespace studio
