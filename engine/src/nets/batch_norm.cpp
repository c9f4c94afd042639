#include "nets/batch_norm.h"

#include <torch/autograd.h>

#include "dist/process_group.h"

namespace studio {
namespace {

// A sum over the ranks that autograd can go through: the gradient of each
// rank's input is the sum over the ranks of the output's gradients.
struct AllReduceSum : torch::autograd::Function<AllReduceSum> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, int64_t group) {
    ctx->saved_data["group"] = group;
    std::vector<torch::Tensor> v{x.clone()};
    reinterpret_cast<ProcessGroup*>(group)->allReduceSum(v, "the synchronised BatchNorm statistics");
    return {v[0]};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    auto* group = reinterpret_cast<ProcessGroup*>(ctx->saved_data["group"].toInt());
    std::vector<torch::Tensor> v{grad[0].contiguous().clone()};
    group->allReduceSum(v, "the synchronised BatchNorm gradients");
    return {v[0], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor BatchNorm2dImpl::forward(const torch::Tensor& input) {
  if (!m_group || !is_training()) return torch::nn::BatchNorm2dImpl::forward(input);
  const int64_t channels = input.size(1);
  torch::Tensor x = input.to(torch::kFloat32);
  const std::vector<int64_t> dims{0, 2, 3};
  // Per channel, over this rank's examples and pixels: the sum and the sum
  // of squares of x - c, and the count. The shift c (the running mean, the
  // same on every rank) keeps E[d^2] - E[d]^2 from cancelling digits.
  const std::vector<int64_t> shape{1, channels, 1, 1};
  const torch::Tensor c = running_mean.detach().to(torch::kFloat32);
  torch::Tensor d = x - c.view(shape);
  torch::Tensor count = torch::full({1}, static_cast<double>(x.numel() / channels), x.options());
  torch::Tensor local = torch::cat({d.sum(dims), (d * d).sum(dims), count});
  torch::Tensor global = AllReduceSum::apply(local, reinterpret_cast<int64_t>(m_group))[0];
  torch::Tensor n = global.slice(0, 2 * channels, 2 * channels + 1);
  torch::Tensor shift = global.slice(0, 0, channels) / n;
  torch::Tensor mean = c + shift;
  torch::Tensor var = global.slice(0, channels, 2 * channels) / n - shift * shift;  // biased, as normalisation uses
  {
    // The running variance is unbiased, as BatchNorm's; no host sync.
    torch::NoGradGuard noGrad;
    const double momentum = options.momentum().value_or(0.1);
    running_mean.mul_(1 - momentum).add_(mean.detach(), momentum);
    running_var.mul_(1 - momentum).add_(var.detach() * n / (n - 1).clamp_min(1), momentum);
    num_batches_tracked.add_(1);
  }
  torch::Tensor y = (x - mean.view(shape)) * torch::rsqrt(var.view(shape) + options.eps());
  if (options.affine()) y = y * weight.view(shape) + bias.view(shape);
  return y.to(input.scalar_type());
}

}  // namespace studio
