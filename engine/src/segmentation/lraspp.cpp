// LRASPP with a MobileNetV3-Large backbone (torchvision/models/segmentation/
// lraspp.py): the dilated backbone's features at 1/8 (block 4, "low") and
// 1/16 (the last convolution, "high"); the head gates 128 channels of the
// high features by their global average (cbr x scale), upsamples them to
// the low features' size, and adds the two 1x1 classifiers' logits, which
// are upsampled to the input's size.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include <stdexcept>

#include "nets/batch_norm.h"
#include "nets/nets.h"
#include "segmentation/segmenters.h"

namespace studio {
namespace {

namespace nn = torch::nn;

constexpr int64_t kLow = 4, kInter = 128;  // block 4: 1/8 of the input; the last (16): 1/16

class LrasppHeadImpl : public nn::Module {
 public:
  LrasppHeadImpl(int64_t low, int64_t high, int64_t classes) {
    cbr = register_module("cbr", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(high, kInter, 1).bias(false)),
                                                BatchNorm2d(kInter), nn::ReLU()));
    scale = register_module(
        "scale", nn::Sequential(nn::AdaptiveAvgPool2d(1), nn::Conv2d(nn::Conv2dOptions(high, kInter, 1).bias(false)),
                                nn::Sigmoid()));
    low_classifier = register_module("low_classifier", nn::Conv2d(nn::Conv2dOptions(low, classes, 1)));
    high_classifier = register_module("high_classifier", nn::Conv2d(nn::Conv2dOptions(kInter, classes, 1)));
  }
  torch::Tensor forward(const torch::Tensor& low, const torch::Tensor& high) {
    torch::Tensor x = cbr->forward(high) * scale->forward(high);
    x = upsampled(x, low.sizes().slice(2));
    return low_classifier->forward(low) + high_classifier->forward(x);
  }
  nn::Sequential cbr{nullptr}, scale{nullptr};
  nn::Conv2d low_classifier{nullptr}, high_classifier{nullptr};
};
TORCH_MODULE(LrasppHead);

class Lraspp : public SegmentationNet {
 public:
  explicit Lraspp(int64_t classes) {
    // torchvision builds the whole dilated MobileNetV3 (its classifier
    // initialised too) and keeps its features: the same draws here.
    auto net = makeMobileNetV3("mobilenet_v3_large", 1000, nullptr, false, /*dilated=*/true);
    m_backbone = register_module(
        "backbone", nn::Sequential(std::dynamic_pointer_cast<nn::SequentialImpl>(net->named_children()["features"])));
    const int64_t low = 40, high = 960;  // block 4's and the last convolution's channels
    m_head = register_module("classifier", LrasppHead(low, high, classes));
  }
  SegmenterOutput forward(const torch::Tensor& x) override {
    torch::Tensor y = x, low;
    int64_t i = 0;
    for (auto& block : *m_backbone) {
      y = block.forward(y);
      if (i++ == kLow) low = y;
    }
    return {upsampled(m_head->forward(low, y), x.sizes().slice(2)), {}};
  }

 private:
  nn::Sequential m_backbone{nullptr};
  LrasppHead m_head{nullptr};
};

}  // namespace

std::shared_ptr<SegmentationNet> makeSimpleSegmenter(const std::string& kind, int64_t classes, bool aux);

const std::vector<std::string>& segmenterKinds() {
  static const std::vector<std::string> kinds{"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
                                              "deeplabv3_resnet50", "fcn_resnet50"};
  return kinds;
}

std::shared_ptr<SegmentationNet> makeSegmenter(const std::string& kind, int64_t classes, bool aux) {
  if (kind == "lraspp_mobilenet_v3_large") {
    if (aux) throw std::invalid_argument("model.kind " + kind + " has no auxiliary head (torchvision's has none)");
    return std::make_shared<Lraspp>(classes);
  }
  if (kind == "deeplabv3_mobilenet_v3_large" || kind == "deeplabv3_resnet50" || kind == "fcn_resnet50")
    return makeSimpleSegmenter(kind, classes, aux);
  std::string list;
  for (const auto& k : segmenterKinds()) list += (list.empty() ? "" : ", ") + k;
  throw std::invalid_argument("model.kind " + kind + " is not a segmentation model: the kinds are " + list);
}

}  // namespace studio
