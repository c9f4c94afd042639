#include "nets/max_pool.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace studio {
namespace {

// One candidate of a window, in ATen's order: it takes the place when it is
// larger or a NaN.
inline void consider(float v, int64_t i, float& best, int64_t& at) {
  const bool take = (v > best) | (v != v);
  best = take ? v : best;
  at = take ? i : at;
}

// One plane of K x K windows with stride S and padding P, as ATen's
// cpu_max_pool walks them: the window clipped to the plane, the index
// starting at its first element.
template <int K, int S, int P>
void poolPlane(const float* in, float* out, int64_t* index, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  // A window clipped to the plane (the edges).
  const auto clipped = [&](int64_t oh, int64_t ow) {
    const int64_t h0 = std::max<int64_t>(oh * S - P, 0), h1 = std::min<int64_t>(oh * S - P + K, H);
    const int64_t w0 = std::max<int64_t>(ow * S - P, 0), w1 = std::min<int64_t>(ow * S - P + K, W);
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = h0 * W + w0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) consider(in[h * W + w], h * W + w, best, at);
    out[oh * OW + ow] = best;
    index[oh * OW + ow] = at;
  };
  for (int64_t oh = 0; oh < OH; ++oh) {
    const int64_t top = oh * S - P;
    int64_t ow = 0;
    if (top >= 0 && top + K <= H) {  // the rows whole: the columns' middle without clipping
      for (; ow < OW && ow * S - P < 0; ++ow) clipped(oh, ow);
      for (; ow < OW && ow * S - P + K <= W; ++ow) {
        const int64_t left = ow * S - P;
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = top * W + left;
        for (int h = 0; h < K; ++h) {
          const int64_t rowAt = (top + h) * W + left;
          for (int w = 0; w < K; ++w) consider(in[rowAt + w], rowAt + w, best, at);
        }
        out[oh * OW + ow] = best;
        index[oh * OW + ow] = at;
      }
    }
    for (; ow < OW; ++ow) clipped(oh, ow);
  }
}

template <int K, int S, int P>
void poolAll(const torch::Tensor& x, torch::Tensor& out, torch::Tensor& index) {
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3), OH = out.size(2), OW = out.size(3);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  int64_t* i = index.data_ptr<int64_t>();
  // Planes as ATen's kernel splits them (its grain: at least 32,768 outputs a chunk).
  const int64_t grain = std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, OH * OW));
  at::parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p)
      poolPlane<K, S, P>(in + p * H * W, o + p * OH * OW, i + p * OH * OW, H, W, OH, OW);
  });
}

bool ours(const torch::Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
  const bool window = (kernel == 2 && stride == 2 && padding == 0) || (kernel == 3 && stride == 2 && padding == 1);
  return window && x.is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 4 && x.is_contiguous() &&
         x.size(2) + 2 * padding >= kernel && x.size(3) + 2 * padding >= kernel;
}

// Outputs and argmax indices, as at::max_pool2d_with_indices gives them.
std::pair<torch::Tensor, torch::Tensor> pooled(const torch::Tensor& x, int64_t kernel, int64_t padding) {
  const int64_t OH = (x.size(2) + 2 * padding - kernel) / 2 + 1, OW = (x.size(3) + 2 * padding - kernel) / 2 + 1;
  torch::Tensor out = torch::empty({x.size(0), x.size(1), OH, OW}, x.options());
  torch::Tensor index = torch::empty({x.size(0), x.size(1), OH, OW}, x.options().dtype(torch::kInt64));
  if (kernel == 2)
    poolAll<2, 2, 0>(x, out, index);
  else
    poolAll<3, 2, 1>(x, out, index);
  return {out, index};
}

class MaxPoolFunction : public torch::autograd::Function<MaxPoolFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, int64_t kernel,
                               int64_t padding) {
    auto [out, index] = pooled(x, kernel, padding);
    ctx->save_for_backward({x, index});
    ctx->saved_data["kernel"] = kernel;
    ctx->saved_data["padding"] = padding;
    ctx->mark_non_differentiable({index});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const int64_t k = ctx->saved_data["kernel"].toInt(), p = ctx->saved_data["padding"].toInt();
    return {at::max_pool2d_with_indices_backward(grads[0], saved[0], {k, k}, {2, 2}, {p, p}, {1, 1}, false, saved[1]),
            torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor maxPool2d(const torch::Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
  if (!ours(x, kernel, stride, padding)) return torch::max_pool2d(x, kernel, stride, padding);
  if (!(torch::GradMode::is_enabled() && x.requires_grad())) return pooled(x, kernel, padding).first;
  return MaxPoolFunction::apply(x, kernel, padding);
}

torch::Tensor MaxPool2dImpl::forward(const torch::Tensor& x) {
  const auto &k = options.kernel_size(), &s = options.stride(), &p = options.padding();
  const auto& d = options.dilation();
  const bool square = k->at(0) == k->at(1) && s->at(0) == s->at(1) && p->at(0) == p->at(1);
  if (!square || d->at(0) != 1 || d->at(1) != 1 || options.ceil_mode()) return torch::nn::MaxPool2dImpl::forward(x);
  return maxPool2d(x, k->at(0), s->at(0), p->at(0));
}

}  // namespace studio
