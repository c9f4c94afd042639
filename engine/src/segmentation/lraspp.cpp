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

#include "nets/batch_norm.h"
#include "segmentation/segmenters.h"

namespace studio {
namespace {

namespace nn = torch::nn;

constexpr int64_t kInter = 128;

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
  explicit Lraspp(int64_t classes) : m_backbone(segmenterBackbone(/*resnet50=*/false)) {
    register_module("backbone", m_backbone.module);
    m_head = register_module("classifier", LrasppHead(m_backbone.earlyChannels, m_backbone.outChannels, classes));
  }
  SegmenterOutput forward(const torch::Tensor& x) override {
    torch::Tensor low;
    const torch::Tensor high = m_backbone.forward(x, low);
    return {upsampled(m_head->forward(low, high), x.sizes().slice(2)), {}};
  }

 private:
  SegmenterBackbone m_backbone;
  LrasppHead m_head{nullptr};
};

}  // namespace

std::shared_ptr<SegmentationNet> makeLraspp(int64_t classes) { return std::make_shared<Lraspp>(classes); }

}  // namespace studio
