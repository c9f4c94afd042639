// torchvision's ResNet (torchvision/models/resnet.py): resnet18 and resnet34
// of BasicBlocks, resnet50 of Bottlenecks with the stride on the 3x3 conv
// ("ResNet V1.5"), zero_init_residual False; resnet50's later stages
// dilated instead of strided where asked (replace_stride_with_dilation, as
// torchvision's segmenters build it).
#include <torch/nn/functional/pooling.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <map>
#include <stdexcept>

#include "nets/layers.h"
#include "nets/max_pool.h"

namespace studio {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation = 1) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2 * dilation).dilation(dilation).bias(false));
}

BatchNorm2d norm(int64_t c) { return BatchNorm2d(c); }

// BasicBlock (expansion 1) and Bottleneck (expansion 4) in one: conv1, bn1,
// conv2, bn2[, conv3, bn3][, downsample "0" conv 1x1, "1" bn].
class ResBlockImpl : public nn::Module {
 public:
  ResBlockImpl(bool bottleneck, int64_t in, int64_t planes, int64_t stride, int64_t dilation = 1)
      : m_bottleneck(bottleneck) {
    const int64_t out = bottleneck ? planes * 4 : planes;
    if (bottleneck) {
      conv1 = register_module("conv1", conv(in, planes, 1, 1));
      bn1 = register_module("bn1", norm(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, stride, dilation));
      bn2 = register_module("bn2", norm(planes));
      conv3 = register_module("conv3", conv(planes, out, 1, 1));
      bn3 = register_module("bn3", norm(out));
    } else {
      conv1 = register_module("conv1", conv(in, planes, 3, stride));
      bn1 = register_module("bn1", norm(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, 1));
      bn2 = register_module("bn2", norm(planes));
    }
    if (stride != 1 || in != out) {
      downsample = register_module("downsample", nn::Sequential(conv(in, out, 1, stride), norm(out)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    if (m_bottleneck) {
      y = torch::relu(bn2(conv2(y)));
      y = bn3(conv3(y));
    } else {
      y = bn2(conv2(y));
    }
    return torch::relu(y + (downsample ? downsample->forward(x) : x));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::Sequential downsample{nullptr};

 private:
  bool m_bottleneck;
};
TORCH_MODULE(ResBlock);

}  // namespace

std::shared_ptr<TorchvisionNet> makeResNet(const std::string& kind, int64_t classes,
                                           const std::array<bool, 3>& dilateStages) {
  static const std::map<std::string, std::pair<bool, std::vector<int>>> kLayers = {
      {"resnet18", {false, {2, 2, 2, 2}}}, {"resnet34", {false, {3, 4, 6, 3}}}, {"resnet50", {true, {3, 4, 6, 3}}}};
  const auto& [bottleneck, blocks] = kLayers.at(kind);
  if (!bottleneck && (dilateStages[0] || dilateStages[1] || dilateStages[2]))
    throw std::invalid_argument(kind + "'s BasicBlocks are never dilated (torchvision refuses it too)");
  auto net = std::make_shared<TorchvisionNet>();
  TorchvisionNet& n = *net;
  auto conv1 = n.register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
  auto bn1 = n.register_module("bn1", norm(64));
  n.stages.push_back({"conv1", "Conv2d", conv1, [conv1](const torch::Tensor& x) mutable { return conv1->forward(x); }});
  n.stages.push_back({"bn1", "BatchNorm2d", bn1, [bn1](const torch::Tensor& x) mutable { return bn1->forward(x); }});
  n.stages.push_back({"relu", "ReLU", nullptr, [](const torch::Tensor& x) { return torch::relu(x); }});
  n.stages.push_back({"maxpool", "MaxPool2d", nullptr, [](const torch::Tensor& x) { return maxPool2d(x, 3, 2, 1); }});
  int64_t in = 64, dilation = 1;
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    const int64_t planes = int64_t{64} << stage;
    nn::Sequential layer;
    // As torchvision's _make_layer: a dilated stage's first block keeps the
    // previous dilation, its stride becoming the later blocks' dilation.
    int64_t stride = stage > 0 ? 2 : 1;
    const int64_t previous = dilation;
    if (stage > 0 && dilateStages[stage - 1]) {
      dilation *= stride;
      stride = 1;
    }
    for (int b = 0; b < blocks[stage]; ++b) {
      layer->push_back(ResBlock(bottleneck, in, planes, b == 0 ? stride : 1, b == 0 ? previous : dilation));
      in = bottleneck ? planes * 4 : planes;
    }
    const std::string name = "layer" + std::to_string(stage + 1);
    n.register_module(name, layer);
    n.stages.push_back(
        {name, "Sequential", layer.ptr(), [layer](const torch::Tensor& x) mutable { return layer->forward(x); }});
  }
  tv::addPooling(n);
  auto fc = n.register_module("fc", nn::Linear(in, classes));
  n.stages.push_back({"fc", "Linear", fc, [fc](const torch::Tensor& x) mutable { return fc->forward(x); }, false});
  n.head = "fc";
  tv::initConvAndNorm(n);  // fc keeps nn.Linear's own initialisation, as in torchvision
  return net;
}

}  // namespace studio
