#pragma once
// torchvision's semantic segmentation models (torchvision/models/
// segmentation, 0.26) rebuilt in LibTorch with the same module, parameter
// and buffer names, so that a state dict torchvision saves loads into them
// key for key and theirs loads back into torchvision:
//   lraspp_mobilenet_v3_large: backbone.0 .. backbone.16 (MobileNetV3-Large's
//     features, its last stage dilated: 1/16 of the input), and
//     classifier.cbr, classifier.scale, classifier.low_classifier and
//     classifier.high_classifier (LRASPPHead, 128 channels between);
//   deeplabv3_mobilenet_v3_large: backbone.0 .. backbone.16 (the same
//     dilated features), classifier (DeepLabHead: ASPP at rates 12, 24, 36);
//   deeplabv3_resnet50, fcn_resnet50: backbone.conv1, .bn1, .layer1 ..
//     .layer4 (ResNet-50, layer3 and layer4 dilated), classifier (DeepLabHead,
//     FCNHead);
//   with aux (torchvision's aux_loss), aux_classifier: an FCNHead on block 4
//     (MobileNetV3) or layer3 (ResNet-50); LRASPP has none.
// forward(x) gives the logits per class at x's size ("out", as torchvision's
// dict); aux is undefined for a model without an auxiliary head.
// Thread: engine thread (or the one thread that made it).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/functional/upsampling.h>
#include <torch/nn/module.h>

#include "studio/model_kinds.h"

namespace studio {

struct SegmenterOutput {
  torch::Tensor out;  // [N, classes, H, W]
  torch::Tensor aux;  // the auxiliary head's, at the same size; undefined when there is none
};

class SegmentationNet : public torch::nn::Module {
 public:
  virtual SegmenterOutput forward(const torch::Tensor& x) = 0;
};

// x resized to size (height, width) as torchvision's segmenters resize
// their logits: F.interpolate(mode="bilinear", align_corners=False).
inline torch::Tensor upsampled(const torch::Tensor& x, c10::IntArrayRef size) {
  namespace F = torch::nn::functional;
  return F::interpolate(x, F::InterpolateFuncOptions()
                               .size(std::vector<int64_t>{size[0], size[1]})
                               .mode(torch::kBilinear)
                               .align_corners(false));
}

// A segmenter's backbone, as torchvision's IntermediateLayerGetter takes it
// from a dilated classification net (built whole, its classifier
// initialised too, as torchvision builds it): the spatial stages in order,
// registered by the model as "backbone" (MobileNetV3-Large's features.N as
// backbone.N; ResNet-50's conv1, bn1, layer1..4 by name), and the early
// features (MobileNetV3's block 4 at 1/8 of the input, ResNet-50's layer3)
// that LRASPP's low branch and the auxiliary head take.
struct SegmenterBackbone {
  std::shared_ptr<torch::nn::Module> module;
  std::vector<std::function<torch::Tensor(const torch::Tensor&)>> stages;
  size_t earlyAt = 0;
  int64_t earlyChannels = 0, outChannels = 0;
  // The last stage's features; early gets the earlyAt stage's.
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor& early) const;
};
// resnet50: ResNet-50 with layer3 and layer4 dilated (1/8); else
// MobileNetV3-Large with its last stage dilated (1/16).
SegmenterBackbone segmenterBackbone(bool resnet50);

// The families, one per file: lraspp.cpp, and deeplab_fcn.cpp's FCN and
// DeepLabV3 (torchvision's _SimpleSegmentationModel).
std::shared_ptr<SegmentationNet> makeLraspp(int64_t classes);
std::shared_ptr<SegmentationNet> makeSimpleSegmenter(const std::string& kind, int64_t classes, bool aux);

// A model of `kind` (segmenterKinds()) for `classes` classes (the
// background among them, as torchvision counts), initialised as
// torchvision initialises it; aux: with the auxiliary head. Throws
// std::invalid_argument naming the kinds, or an aux LRASPP.
std::shared_ptr<SegmentationNet> makeSegmenter(const std::string& kind, int64_t classes, bool aux = false);

}  // namespace studio
