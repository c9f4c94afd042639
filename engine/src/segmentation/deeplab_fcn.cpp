// torchvision's FCN and DeepLabV3 (torchvision/models/segmentation/fcn.py,
// deeplabv3.py, _utils.py's _SimpleSegmentationModel): a backbone's "out"
// features through the classifier, and with aux an auxiliary FCNHead on
// earlier features, each upsampled to the input's size (bilinear,
// align_corners False).
//  - fcn_resnet50, deeplabv3_resnet50: ResNet-50 with layer3 and layer4
//    dilated (1/8 of the input); "out" is layer4 (2048 channels), "aux"
//    layer3 (1024). The backbone keeps conv1, bn1 and layer1..4 (no fc).
//  - deeplabv3_mobilenet_v3_large: MobileNetV3-Large's features dilated;
//    "out" is the last convolution (960), "aux" block 4 (40).
//  - FCNHead(in): 3x3 conv to in/4, BatchNorm, ReLU, Dropout(0.1), 1x1 conv.
//  - DeepLabHead(in): ASPP (a 1x1 conv, 3x3 convs dilated 12, 24 and 36, and
//    the image's average through a 1x1 conv, upsampled; each to 256 channels
//    with BatchNorm and ReLU; concatenated, projected to 256, Dropout(0.5)),
//    a 3x3 conv, BatchNorm, ReLU, and a 1x1 conv to the classes.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include "nets/batch_norm.h"
#include "nets/dropout.h"
#include "segmentation/segmenters.h"

namespace studio {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t dilation = 1, bool bias = false) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).padding(kernel / 2 * dilation).dilation(dilation).bias(bias));
}

nn::Sequential fcnHead(int64_t in, int64_t classes) {
  const int64_t inter = in / 4;
  return nn::Sequential(conv(in, inter, 3), BatchNorm2d(inter), nn::ReLU(), Dropout(0.1),
                        conv(inter, classes, 1, 1, true));
}

class AsppImpl : public nn::Module {
 public:
  explicit AsppImpl(int64_t in) {
    constexpr int64_t out = 256;
    convs = register_module("convs", nn::ModuleList());
    convs->push_back(nn::Sequential(conv(in, out, 1), BatchNorm2d(out), nn::ReLU()));
    for (int64_t rate : {12, 24, 36})
      convs->push_back(nn::Sequential(conv(in, out, 3, rate), BatchNorm2d(out), nn::ReLU()));
    convs->push_back(nn::Sequential(nn::AdaptiveAvgPool2d(1), conv(in, out, 1), BatchNorm2d(out), nn::ReLU()));
    project =
        register_module("project", nn::Sequential(conv(5 * out, out, 1), BatchNorm2d(out), nn::ReLU(), Dropout(0.5)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> parts;
    for (size_t i = 0; i < convs->size(); ++i) {
      torch::Tensor y = convs->ptr<nn::SequentialImpl>(i)->forward(x);
      parts.push_back(i + 1 == convs->size() ? upsampled(y, x.sizes().slice(2)) : y);  // the pooling's, back to size
    }
    return project->forward(torch::cat(parts, 1));
  }
  nn::ModuleList convs{nullptr};
  nn::Sequential project{nullptr};
};
TORCH_MODULE(Aspp);

nn::Sequential deepLabHead(int64_t in, int64_t classes) {
  return nn::Sequential(Aspp(in), conv(256, 256, 3), BatchNorm2d(256), nn::ReLU(), conv(256, classes, 1, 1, true));
}

class SimpleSegmenter : public SegmentationNet {
 public:
  SimpleSegmenter(const std::string& kind, int64_t classes, bool aux)
      : m_backbone(segmenterBackbone(kind.find("resnet50") != std::string::npos)) {
    register_module("backbone", m_backbone.module);
    const int64_t out = m_backbone.outChannels;
    m_classifier =
        register_module("classifier", kind.rfind("fcn", 0) == 0 ? fcnHead(out, classes) : deepLabHead(out, classes));
    if (aux) m_aux = register_module("aux_classifier", fcnHead(m_backbone.earlyChannels, classes));
  }
  SegmenterOutput forward(const torch::Tensor& x) override {
    torch::Tensor early;
    const torch::Tensor y = m_backbone.forward(x, early);
    SegmenterOutput o;
    o.out = upsampled(m_classifier->forward(y), x.sizes().slice(2));
    if (m_aux) o.aux = upsampled(m_aux->forward(early), x.sizes().slice(2));
    return o;
  }

 private:
  SegmenterBackbone m_backbone;
  nn::Sequential m_classifier{nullptr}, m_aux{nullptr};
};

}  // namespace

std::shared_ptr<SegmentationNet> makeSimpleSegmenter(const std::string& kind, int64_t classes, bool aux) {
  return std::make_shared<SimpleSegmenter>(kind, classes, aux);
}

}  // namespace studio
