#pragma once
// torchvision's SSDlite (Sandler et al., "MobileNetV2", CVPR 2018, section
// 6.3; Howard et al., "Searching for MobileNetV3", ICCV 2019; torchvision
// 0.26, torchvision/models/detection/ssdlite.py and ssd.py) as
// ssdlite320_mobilenet_v3_large builds it, with its module names:
//   "backbone" (SSDLiteFeatureExtractorMobileNet): "features.0" holds
//     MobileNetV3-Large's blocks 0 to 12 and block 13's expansion ("13");
//     "features.1" the rest of block 13 ("0.1" .. "0.3") and blocks 14 to 16;
//     "extra.0" .. "extra.3" four blocks (1x1, 3x3 depthwise of stride 2,
//     1x1; ReLU6) to 512, 256, 256 and 128 channels. Without a trained
//     backbone the last stage's channels are halved (reduced_tail) and every
//     convolution is drawn from normal(0, 0.03).
//   "head": "classification_head.module_list.i" and
//     "regression_head.module_list.i", per feature map a 3x3 depthwise
//     Conv2dNormActivation (ReLU6) and a 1x1 conv: six default boxes per
//     place, their classes' logits or their four offsets.
// BatchNorm2d with eps 0.001 and momentum 0.03 throughout. Every image is
// resized to 320 x 320 and normalised to [-1, 1] (mean and std 0.5).
//   Training: SSDMatcher (IoU 0.5, each box's best default box kept), the
//     smooth L1 loss of the foreground's offsets (box coder weights 10, 10,
//     5, 5) and the cross-entropy with hard negative mining (three negatives
//     per positive), each over the batch's foreground count.
//   Evaluation: softmax; per class the scores over the threshold, the best
//     topkCandidates; NMS per class; the best detectionsPerImage.
// Thread: engine thread.

#include <functional>
#include <vector>

#include <torch/nn/modules/container/modulelist.h>

#include "detection/detector_net.h"

namespace studio::detection {

class SsdLiteImpl : public DetectorNetImpl {
 public:
  explicit SsdLiteImpl(DetectorOptions options);
  std::vector<Detections> detect(const std::vector<torch::Tensor>& images) override;
  // bbox_regression, classification (ssd.py's order). Draws from the default
  // generator only for the transform's size, as torchvision does.
  DetectionLosses losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                         const std::vector<torch::Tensor>& labels) override;

  std::shared_ptr<torch::nn::Module> backbone, head;
  torch::nn::ModuleList extra{nullptr}, classification{nullptr}, regression{nullptr};

 private:
  // The head's outputs (N x A x classes, N x A x 4) and the default boxes
  // (A x 4, each image's alike) of a transformed batch.
  struct Outputs {
    torch::Tensor logits, codes, anchors;
  };
  Outputs run(const ImageBatch& batch);
  void buildBackbone();
  // features.0 and features.1: the backbone's blocks, in order.
  std::array<std::vector<std::function<torch::Tensor(const torch::Tensor&)>>, 2> m_features;
  RcnnTransform m_transform;
};
TORCH_MODULE(SsdLite);

}  // namespace studio::detection
