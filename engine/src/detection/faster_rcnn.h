#pragma once
// torchvision's Faster R-CNN detectors rebuilt in LibTorch with its module,
// parameter and buffer names (torchvision 0.26,
// torchvision/models/detection/faster_rcnn.py), so that torchvision's state
// dict loads key for key and the same weights give the same boxes:
//   fasterrcnn_mobilenet_v3_large_320_fpn, fasterrcnn_mobilenet_v3_large_fpn:
//     "backbone.body" (MobileNetV3-Large's features), "backbone.fpn" (the
//     feature pyramid over blocks 13 and 16, with LastLevelMaxPool);
//   fasterrcnn_resnet50_fpn_v2: "backbone.body" (ResNet-50 to layer4),
//     "backbone.fpn" over layer1-4 with BatchNorm, a two-conv RPN head and
//     FastRCNNConvFCHead (Li et al. 2021, "Benchmarking detection transfer
//     learning with vision transformers", torchvision's v2 recipe);
// then "rpn", "roi_heads"; GeneralizedRCNNTransform in front (rcnn_transform.h).
// Thread: engine thread.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "detection/rcnn_transform.h"
#include "detection/roi_heads.h"
#include "detection/rpn.h"
#include "run/weights_file.h"
#include "studio/model_kinds.h"  // detectorKinds()
#include "torch_pch.h"

namespace studio::detection {

struct FasterRcnnOptions {
  std::string kind;
  int64_t classes = 91;  // with the background: torchvision's num_classes
  // The backbone's weights were trained (model.weights): FrozenBatchNorm2d
  // in it, as torchvision builds a detector with weights or weights_backbone.
  bool pretrained = false;
  // Backbone stages trained, from the last (0 to 6); -1: torchvision's
  // default (3 with trained weights, all 6 without).
  int trainableBackboneLayers = -1;
  RcnnTransformOptions transform;
  RpnOptions rpn;
  RoiHeadsOptions roiHeads;
};

// torchvision's defaults for kind (its builder's keyword defaults). Throws
// std::invalid_argument for a kind that is not a detector here.
FasterRcnnOptions fasterRcnnDefaults(const std::string& kind, int64_t classes);
// Whether a detector kind's backbone is ResNet-50 (else MobileNetV3-Large).
bool resnetBackbone(const std::string& kind);

using DetectionLosses = std::vector<std::pair<std::string, torch::Tensor>>;  // torchvision's order

class FasterRcnnImpl : public torch::nn::Module {
 public:
  explicit FasterRcnnImpl(FasterRcnnOptions options);
  // Evaluation: each image (3 x h x w, floating point in [0, 1]) its boxes
  // in its own pixels, scores and labels (1 .. classes - 1). Uses the
  // modules' mode as it is (call eval() first, as with torchvision).
  std::vector<Detections> detect(const std::vector<torch::Tensor>& images);
  // Training: the losses for images and their boxes (K x 4, pixels) and
  // labels (K, int64, 1 .. classes - 1): loss_classifier, loss_box_reg,
  // loss_objectness, loss_rpn_box_reg. Draws from the default generator as
  // torchvision does (the size, then the RPN's and the heads' samplers).
  DetectionLosses losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                         const std::vector<torch::Tensor>& labels);
  // The backbone's feature maps ("0", "1", "pool") for a batch already transformed.
  FeatureMaps features(const torch::Tensor& batch);
  const FasterRcnnOptions& options() const { return m_o; }

  std::shared_ptr<torch::nn::Module> backbone;
  Rpn rpn{nullptr};
  RoiHeads roi_heads{nullptr};

 private:
  void buildMobilenetBackbone();
  void buildResnetBackbone();
  FasterRcnnOptions m_o;
  RcnnTransform m_transform;
  std::vector<std::function<torch::Tensor(const torch::Tensor&)>> m_body;  // the blocks, in order
  std::vector<size_t> m_returned;                                          // the blocks whose outputs feed the pyramid
  std::shared_ptr<torch::nn::Module> m_fpn;
};
TORCH_MODULE(FasterRcnn);

// What loadDetectorWeights read.
struct DetectorWeights {
  int64_t tensors = 0;         // loaded from the file
  bool backboneOnly = false;   // a classifier's state dict: its features into backbone.body
  bool predictorKept = false;  // the file's box predictor (its classes are the model's)
  int64_t fileClasses = 0;     // the file's box predictor's classes (with the background)
};

// Loads a whole detector's state dict (torchvision's names; the RPN head's
// and the pyramid's names of older torchvision accepted) or a MobileNetV3
// classifier's (its features into the backbone). A detector whose box
// predictor has other classes than the model keeps the model's own
// predictor, as torchvision's fine-tuning tutorial replaces it. Throws
// ModelError naming the keys that are missing, unexpected, or of another shape.
DetectorWeights loadDetectorWeights(FasterRcnnImpl& model, const NamedTensors& tensors, const std::string& path);

}  // namespace studio::detection
