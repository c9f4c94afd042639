#pragma once
// The pieces torchvision's networks share (torchvision/ops/misc.py,
// torchvision/ops/stochastic_depth.py, torchvision/models/_utils.py), with
// torchvision's names.
// Thread: engine thread.

#include <cstdint>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "nets/batch_norm.h"
#include "nets/nets.h"

namespace studio::tv {

// An nn::Sequential that can sit inside another (LibTorch's own cannot: its
// templated forward does not fit AnyModule).
class SeqImpl : public torch::nn::SequentialImpl {
 public:
  using torch::nn::SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return torch::nn::SequentialImpl::forward(std::move(x)); }
};
TORCH_MODULE(Seq);

enum class Act { None, ReLU, Hardswish, SiLU, ReLU6 };

// _make_divisible(v, divisor): v rounded to the nearest multiple of divisor,
// at least min_value, and not below 90% of v.
int64_t makeDivisible(double v, int64_t divisor = 8);

struct NormSpec {
  double eps = 1e-5;
  double momentum = 0.1;
  // FrozenBatchNorm2d (torchvision.ops.misc): what torchvision's detectors
  // put in a backbone whose weights were trained (eps 1e-5, no
  // num_batches_tracked, the statistics and affine as buffers).
  bool frozen = false;
};

// torchvision.ops.FrozenBatchNorm2d: x * w * rsqrt(var + eps) + b - mean * ...,
// with buffers "weight", "bias", "running_mean", "running_var".
class FrozenBatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit FrozenBatchNorm2dImpl(int64_t channels, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias, running_mean, running_var;

 private:
  double m_eps;
};
TORCH_MODULE(FrozenBatchNorm2d);

// Conv2dNormActivation: "0" conv (no bias), "1" BatchNorm2d, "2" the
// activation; padding (kernel - 1) / 2 * dilation.
Seq convNormAct(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act, const NormSpec& norm,
                int64_t dilation = 1);

torch::Tensor activate(const torch::Tensor& x, Act act);

// SqueezeExcitation: avgpool, fc1 and fc2 (1x1 convs with bias), x scaled by
// scale_activation(fc2(activation(fc1(avgpool(x))))).
class SqueezeExcitationImpl : public torch::nn::Module {
 public:
  SqueezeExcitationImpl(int64_t channels, int64_t squeeze, Act activation, bool hardsigmoid);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d fc1{nullptr}, fc2{nullptr};

 private:
  Act m_activation;
  bool m_hardsigmoid;
};
TORCH_MODULE(SqueezeExcitation);

// stochastic_depth(x, p, "row", training): each example's residual branch
// dropped with probability p, the rest scaled by 1 / (1 - p).
torch::Tensor stochasticDepthRow(const torch::Tensor& x, double p, bool training);

// Each child of `s` (registered in the net as `prefix`) becomes a stage
// "prefix.i" of the type typeOf(i) says ("Sequential" when typeOf is empty);
// with spatial false, a stage after the pooling.
void addStages(TorchvisionNet& net, const std::string& prefix, const torch::nn::Sequential& s,
               const std::function<std::string(size_t)>& typeOf, bool spatial = false);
// The "avgpool" stage: AdaptiveAvgPool2d(1), then the flatten of forward().
void addPooling(TorchvisionNet& net);

// Weight init as torchvision's constructors: conv kaiming_normal_(fan_out,
// relu gain), conv bias 0, BatchNorm weight 1 and bias 0; Linear layers are
// left to the caller.
void initConvAndNorm(torch::nn::Module& net);

}  // namespace studio::tv
