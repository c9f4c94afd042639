// The segmenters' backbones (segmentation/segmenters.h) and the registry of
// their kinds.
#include <torch/nn/modules/container/sequential.h>

#include <algorithm>
#include <stdexcept>

#include "nets/nets.h"
#include "segmentation/segmenters.h"

namespace studio {

torch::Tensor SegmenterBackbone::forward(const torch::Tensor& x, torch::Tensor& early) const {
  torch::Tensor y = x;
  for (size_t i = 0; i < stages.size(); ++i) {
    y = stages[i](y);
    if (i == earlyAt) early = y;
  }
  return y;
}

SegmenterBackbone segmenterBackbone(bool resnet50) {
  namespace nn = torch::nn;
  const auto net = resnet50 ? makeResNet("resnet50", 1000, {false, true, true})
                            : makeMobileNetV3("mobilenet_v3_large", 1000, nullptr, false, /*dilated=*/true);
  SegmenterBackbone b;
  // The net's stages up to its pooling; MobileNetV3's features keep their
  // Sequential (backbone.N), ResNet-50's stages their names.
  std::shared_ptr<nn::Module> named = resnet50 ? std::make_shared<nn::Module>() : nullptr;
  for (const NetStage& s : net->stages) {
    if (!s.spatial) break;
    if (named && s.module) named->register_module(s.name, s.module);
    b.stages.push_back(s.run);
    if (s.name == (resnet50 ? "layer3" : "features.4")) b.earlyAt = b.stages.size() - 1;
  }
  b.module = resnet50 ? named : net->named_children()["features"];
  b.earlyChannels = resnet50 ? 1024 : 40;
  b.outChannels = resnet50 ? 2048 : 960;
  return b;
}

std::shared_ptr<SegmentationNet> makeSegmenter(const std::string& kind, int64_t classes, bool aux) {
  if (!isModel(kind, ModelFamily::segmenter))
    throw std::invalid_argument("model.kind " + kind + " is not a segmentation model: the kinds are " +
                                segmenterKindsText());
  if (segmenterHasAux(kind)) return makeSimpleSegmenter(kind, classes, aux);
  if (aux) throw std::invalid_argument("model.kind " + kind + " has no auxiliary head (torchvision's has none)");
  return makeLraspp(classes);
}

}  // namespace studio
