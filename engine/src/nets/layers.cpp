#include "nets/layers.h"

#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/functional.h>

#include <algorithm>
#include <cmath>

namespace studio::tv {

namespace nn = torch::nn;

int64_t makeDivisible(double v, int64_t divisor) {
  int64_t rounded = std::max<int64_t>(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

torch::Tensor activate(const torch::Tensor& x, Act act) {
  switch (act) {
    case Act::ReLU:
      return torch::relu(x);
    case Act::Hardswish:
      return torch::hardswish(x);
    case Act::SiLU:
      return torch::silu(x);
    case Act::ReLU6:  // nn.ReLU6: hardtanh(x, 0, 6)
      return torch::hardtanh(x, 0.0, 6.0);
    case Act::None:
      break;
  }
  return x;
}

Seq convNormAct(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act, const NormSpec& norm,
                int64_t dilation) {
  Seq s;
  s->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                              .stride(stride)
                              .padding((kernel - 1) / 2 * dilation)
                              .dilation(dilation)
                              .groups(groups)
                              .bias(false)));
  if (norm.frozen) {
    s->push_back(FrozenBatchNorm2d(out, norm.eps));
  } else {
    BatchNorm2d bn(nn::BatchNormOptions(out).eps(norm.eps).momentum(norm.momentum));
    s->push_back(bn);
  }
  if (act != Act::None) s->push_back(nn::Functional([act](const torch::Tensor& x) { return activate(x, act); }));
  return s;
}

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(int64_t channels, double eps) : m_eps(eps) {
  weight = register_buffer("weight", torch::ones({channels}));
  bias = register_buffer("bias", torch::zeros({channels}));
  running_mean = register_buffer("running_mean", torch::zeros({channels}));
  running_var = register_buffer("running_var", torch::ones({channels}));
}

torch::Tensor FrozenBatchNorm2dImpl::forward(const torch::Tensor& x) {
  // As torchvision's, in this order: scale = w * (rv + eps).rsqrt(), bias = b - rm * scale.
  const torch::Tensor scale = weight * (running_var + m_eps).rsqrt();
  const torch::Tensor shift = bias - running_mean * scale;
  return x * scale.reshape({1, -1, 1, 1}) + shift.reshape({1, -1, 1, 1});
}

SqueezeExcitationImpl::SqueezeExcitationImpl(int64_t channels, int64_t squeeze, Act activation, bool hardsigmoid)
    : m_activation(activation), m_hardsigmoid(hardsigmoid) {
  fc1 = register_module("fc1", nn::Conv2d(nn::Conv2dOptions(channels, squeeze, 1)));
  fc2 = register_module("fc2", nn::Conv2d(nn::Conv2dOptions(squeeze, channels, 1)));
}

torch::Tensor SqueezeExcitationImpl::forward(const torch::Tensor& x) {
  torch::Tensor s = torch::adaptive_avg_pool2d(x, {1, 1});
  s = fc2(activate(fc1(s), m_activation));
  s = m_hardsigmoid ? torch::hardsigmoid(s) : torch::sigmoid(s);
  return s * x;
}

torch::Tensor stochasticDepthRow(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0.0) return x;
  const double survival = 1.0 - p;
  std::vector<int64_t> size(static_cast<size_t>(x.dim()), 1);
  size[0] = x.size(0);
  torch::Tensor noise = torch::empty(size, x.options()).bernoulli_(survival);
  if (survival > 0.0) noise.div_(survival);
  return x * noise;
}

void addStages(TorchvisionNet& net, const std::string& prefix, const nn::Sequential& s,
               const std::function<std::string(size_t)>& typeOf, bool spatial) {
  nn::Sequential seq = s;  // a copy of the holder, not const, for the stages to run
  for (size_t i = 0; i < s->size(); ++i) {
    std::string type = typeOf ? typeOf(i) : std::string("Sequential");
    net.stages.push_back({prefix + "." + std::to_string(i), std::move(type), s->ptr(i),
                          [seq, i](const torch::Tensor& x) mutable {
                            return (seq->begin() + static_cast<std::ptrdiff_t>(i))->forward(x);
                          },
                          spatial});
  }
}

void addPooling(TorchvisionNet& net) {
  net.stages.push_back({"avgpool", "AdaptiveAvgPool2d", nullptr,
                        [](const torch::Tensor& x) {
                          return torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
                        },
                        false});
}

void initConvAndNorm(nn::Module& net) {
  torch::NoGradGuard noGrad;
  for (const auto& m : net.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

}  // namespace studio::tv
