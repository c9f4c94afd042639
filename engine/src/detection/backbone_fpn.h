#pragma once
// torchvision's detection backbones with their feature pyramids
// (torchvision/models/detection/backbone_utils.py,
// torchvision/ops/feature_pyramid_network.py), with its module names:
// "body" (the classifier's layers up to the last used) and "fpn"
// ("inner_blocks.i.0", "layer_blocks.i.0", "extra_blocks.p6" / "p7"):
//   MobileNetV3-Large (the Faster R-CNN mobilenet kinds): the pyramid over
//     blocks 13 and 16, LastLevelMaxPool; levels "0", "1", "pool";
//   ResNet-50, fasterrcnn_resnet50_fpn_v2: over layer1-4 with BatchNorm,
//     LastLevelMaxPool; levels "0" .. "3", "pool";
//   ResNet-50, retinanet_resnet50_fpn_v2: over layer2-4 without a norm,
//     LastLevelP6P7(2048, 256) from layer4's output; levels "0" .. "2",
//     "p6", "p7".
// The stages before the trainable ones are frozen as torchvision's
// _resnet_fpn_extractor and _mobilenet_extractor freeze them.
// Thread: engine thread.

#include <functional>
#include <string>
#include <vector>

#include "detection/rpn.h"  // FeatureMaps
#include "torch_pch.h"

namespace studio::detection {

class BackboneImpl : public torch::nn::Module {
 public:
  // kind: a detector kind (its backbone and pyramid). pretrained: its
  // weights were trained (3 trainable stages by default). frozenNorm:
  // FrozenBatchNorm2d in MobileNetV3 (ResNet-50 keeps BatchNorm2d).
  // trainable: stages trained, from the last; -1 the default.
  BackboneImpl(const std::string& kind, bool pretrained, bool frozenNorm, int trainable);
  // The pyramid's levels, by name, the finest first.
  FeatureMaps forward(const torch::Tensor& batch);

 private:
  void buildMobilenet(bool pretrained, bool frozenNorm, int trainable);
  void buildResnet(const std::string& kind, bool pretrained, int trainable);
  std::vector<std::function<torch::Tensor(const torch::Tensor&)>> m_body;  // the blocks, in order
  std::vector<size_t> m_returned;                                          // the blocks whose outputs feed the pyramid
  std::shared_ptr<torch::nn::Module> m_fpn;
};
TORCH_MODULE(Backbone);

}  // namespace studio::detection
