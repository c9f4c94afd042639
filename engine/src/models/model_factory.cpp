#include "models/model_factory.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <algorithm>

#include "nets/batch_norm.h"
#include "nets/dropout.h"
#include "nets/max_pool.h"
#include "studio/model_kinds.h"

namespace studio {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1) {
  // No bias: the batch norm that follows has its own shift.
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// A basic residual block (two 3x3 convs), as in torchvision's BasicBlock.
struct ResidualBlockImpl : nn::Module {
  ResidualBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(register_module("conv1", conv3x3(in, out, stride))),
        bn1(register_module("bn1", BatchNorm2d(out))),
        conv2(register_module("conv2", conv3x3(out, out))),
        bn2(register_module("bn2", BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut = register_module(
          "shortcut",
          nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)), BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    y = bn2(conv2(y));
    return torch::relu(y + (shortcut ? shortcut->forward(x) : x));
  }
  nn::Conv2d conv1;
  BatchNorm2d bn1;
  nn::Conv2d conv2;
  BatchNorm2d bn2;
  nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(ResidualBlock);

}  // namespace

torch::nn::Sequential buildModel(const ModelConfig& c, const InputShape& input, int64_t classes) {
  const int64_t channels = input.channels, height = input.height, width = input.width;
  nn::Sequential m;
  if (isModel(c.kind, ModelFamily::mlp)) {
    m->push_back(nn::Flatten());
    int64_t in = input.features > 0 ? input.features : channels * height * width;
    for (int i = 0; i < c.depth; ++i) {
      m->push_back(nn::Linear(in, c.width));
      m->push_back(nn::ReLU());
      if (c.dropout > 0) m->push_back(Dropout(c.dropout));
      in = c.width;
    }
    m->push_back(nn::Linear(in, classes));
    return m;
  }
  if (isModel(c.kind, ModelFamily::cnn)) {
    int64_t in = channels, h = height, w = width;
    for (int i = 0; i < c.depth; ++i) {
      const int64_t out = int64_t(c.width) << i;
      // The stage's ReLU comes after its pooling: max-pooling and ReLU
      // commute exactly (both are monotone; the same element wins a window,
      // and a window of non-positive values passes no gradient either way),
      // so the outputs and gradients are bit for bit those of the usual
      // conv-BN-ReLU-pool order, with the ReLU's forward and backward over a
      // quarter of the elements (test_builtin_models checks it against
      // PyTorch's usual order). The parameters keep their indices.
      m->push_back(conv3x3(in, out));
      m->push_back(BatchNorm2d(out));
      if (h >= 2 && w >= 2) {
        m->push_back(MaxPool2d(2));
        h /= 2;
        w /= 2;
      }
      m->push_back(nn::ReLU());
      in = out;
    }
    if (h > 7 || w > 7) {
      h = std::min<int64_t>(h, 7);
      w = std::min<int64_t>(w, 7);
      m->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({h, w})));
    }
    m->push_back(nn::Flatten());
    if (c.dropout > 0) m->push_back(Dropout(c.dropout));
    m->push_back(nn::Linear(in * h * w, classes));
    return m;
  }
  // resnet: stem, then `depth` residual blocks, halving the resolution and
  // doubling the width every second block.
  m->push_back(conv3x3(channels, c.width));
  m->push_back(BatchNorm2d(c.width));
  m->push_back(nn::ReLU());
  int64_t in = c.width;
  for (int i = 0; i < c.depth; ++i) {
    const bool down = i > 0 && i % 2 == 0;
    const int64_t out = down ? in * 2 : in;
    m->push_back(ResidualBlock(in, out, down ? 2 : 1));
    in = out;
  }
  m->push_back(nn::AdaptiveAvgPool2d(1));
  m->push_back(nn::Flatten());
  if (c.dropout > 0) m->push_back(Dropout(c.dropout));
  m->push_back(nn::Linear(in, classes));
  return m;
}

}  // namespace studio
