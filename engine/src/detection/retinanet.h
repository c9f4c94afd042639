#pragma once
// torchvision's RetinaNet (Lin et al., "Focal Loss for Dense Object
// Detection", ICCV 2017; torchvision 0.26,
// torchvision/models/detection/retinanet.py) as retinanet_resnet50_fpn_v2
// builds it, with its module names: "backbone" (ResNet-50, the pyramid over
// layer2-4 with P6 and P7: detection/backbone_fpn.h) and "head"
// (RetinaNetHead: "classification_head" and "regression_head", each four
// 3x3 convs with GroupNorm(32) and ReLU, "conv.i.0" / "conv.i.1", then
// "cls_logits" (a logit per anchor and class, its bias the prior 0.01) or
// "bbox_reg"); GeneralizedRCNNTransform in front. Nine anchors per place
// (three sizes, three ratios) on each of the five levels.
//   Training: each anchor matched to a box (IoU >= 0.5; below 0.4
//     background; between ignored; each box's best anchors kept), the
//     sigmoid focal loss over the anchors not ignored and the generalized
//     IoU loss of the decoded foreground boxes, each per image over its
//     foreground count, then the images' mean.
//   Evaluation: per level, the scores over the threshold, the best
//     topkCandidates of them decoded and clipped; NMS per class over the
//     levels; the best detectionsPerImage kept. torchvision may return
//     label 0 (the background, which no box has): the studio leaves those out.
// Thread: engine thread.

#include <vector>

#include "detection/detector_net.h"

namespace studio::detection {

// The anchors at each place of a feature map: sizes x ratios (nine).
int64_t anchorsPerPlace(const RetinaOptions& options);

// RetinaNetClassificationHead (classes: with the background) or, classes
// 0, RetinaNetRegressionHead: per anchor, its classes' logits or its four offsets.
class RetinaSubheadImpl : public torch::nn::Module {
 public:
  RetinaSubheadImpl(int64_t channels, int64_t anchors, int64_t classes);
  // Each level's N x C x H x W to N x (H W A) x K, the levels concatenated.
  torch::Tensor forward(const std::vector<torch::Tensor>& levels);
  torch::nn::Sequential conv{nullptr};  // four blocks (tv::Seq): conv, GroupNorm, ReLU
  torch::nn::Conv2d out{nullptr};       // "cls_logits" or "bbox_reg"

 private:
  int64_t m_width;  // K: classes, or 4
};
TORCH_MODULE(RetinaSubhead);

class RetinaNetImpl : public DetectorNetImpl {
 public:
  explicit RetinaNetImpl(DetectorOptions options);
  std::vector<Detections> detect(const std::vector<torch::Tensor>& images) override;
  // classification, bbox_regression. Draws from the default generator only
  // for the transform's size, as torchvision does.
  DetectionLosses losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                         const std::vector<torch::Tensor>& labels) override;

  Backbone backbone{nullptr};
  std::shared_ptr<torch::nn::Module> head;  // "classification_head", "regression_head"
  RetinaSubhead classification{nullptr}, regression{nullptr};

 private:
  // The pyramid's levels, the head's outputs (N x A x classes, N x A x 4) and
  // the anchors (A x 4, each image's alike) of a transformed batch.
  struct Outputs {
    std::vector<torch::Tensor> levels;
    torch::Tensor logits, codes, anchors;
  };
  Outputs run(const ImageBatch& batch);
  RcnnTransform m_transform;
};
TORCH_MODULE(RetinaNet);

}  // namespace studio::detection
