#pragma once
// torchvision's Faster R-CNN detectors (torchvision 0.26,
// torchvision/models/detection/faster_rcnn.py) with its module names:
//   fasterrcnn_mobilenet_v3_large_320_fpn, fasterrcnn_mobilenet_v3_large_fpn:
//     "backbone" MobileNetV3-Large's features with the pyramid over blocks
//     13 and 16 (detection/backbone_fpn.h);
//   fasterrcnn_resnet50_fpn_v2: "backbone" ResNet-50 with the pyramid over
//     layer1-4 with BatchNorm, a two-conv RPN head and FastRCNNConvFCHead
//     (Li et al. 2021, "Benchmarking detection transfer learning with
//     vision transformers", torchvision's v2 recipe);
//   maskrcnn_resnet50_fpn_v2: fasterrcnn_resnet50_fpn_v2 with the mask head
//     and predictor under roi_heads (detection/mask_heads.h);
// then "rpn", "roi_heads"; GeneralizedRCNNTransform in front (rcnn_transform.h).
// Thread: engine thread.

#include <vector>

#include "detection/detector_net.h"

namespace studio::detection {

class FasterRcnnImpl : public DetectorNetImpl {
 public:
  explicit FasterRcnnImpl(DetectorOptions options);
  std::vector<Detections> detect(const std::vector<torch::Tensor>& images) override;
  // loss_classifier, loss_box_reg, loss_objectness, loss_rpn_box_reg. Draws
  // from the default generator as torchvision does (the size, then the
  // RPN's and the heads' samplers).
  DetectionLosses losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                         const std::vector<torch::Tensor>& labels) override;
  // Mask R-CNN's (options().roiHeads.masks): loss_mask after the box heads' losses, as torchvision's dict.
  DetectionLosses maskLosses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                             const std::vector<torch::Tensor>& labels, std::vector<torch::Tensor> masks) override;
  // The backbone's feature maps ("0", "1", "pool") for a batch already transformed.
  FeatureMaps features(const torch::Tensor& batch) { return backbone->forward(batch); }

  Backbone backbone{nullptr};
  Rpn rpn{nullptr};
  RoiHeads roi_heads{nullptr};

 private:
  DetectionLosses trainingLosses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                 const std::vector<torch::Tensor>& labels, std::vector<torch::Tensor>* masks);
  RcnnTransform m_transform;
};
TORCH_MODULE(FasterRcnn);

}  // namespace studio::detection
