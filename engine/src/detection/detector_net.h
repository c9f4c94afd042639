#pragma once
// What every detector here is to the engine (the detection task, predict,
// the export, weights): torchvision's detectors rebuilt in LibTorch with its
// module, parameter and buffer names, so that torchvision's state dict
// loads key for key and the same weights give the same boxes.
//   Two-stage (detection/faster_rcnn.h): fasterrcnn_mobilenet_v3_large_320_fpn,
//     fasterrcnn_mobilenet_v3_large_fpn, fasterrcnn_resnet50_fpn_v2;
//   single-stage (detection/retinanet.h): retinanet_resnet50_fpn_v2;
//   SSD (detection/ssdlite.h): ssdlite320_mobilenet_v3_large;
//   Mask R-CNN (faster_rcnn.h with detection/mask_heads.h):
//     maskrcnn_resnet50_fpn_v2, whose detections carry masks.
// Thread: engine thread.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "detection/backbone_fpn.h"
#include "detection/rcnn_transform.h"
#include "detection/roi_heads.h"
#include "detection/rpn.h"
#include "detection/ssd_parts.h"
#include "studio/train_config.h"
#include "tensors/weights_file.h"
#include "torch_pch.h"

namespace studio::detection {

// RetinaNet's anchors, matcher and post-processing (torchvision's RetinaNet keywords).
struct RetinaOptions {
  std::vector<std::vector<double>> anchorSizes;   // per feature level
  std::vector<std::vector<double>> aspectRatios;  // per feature level
  double fgIou = 0.5, bgIou = 0.4;                // the matcher's, low-quality matches kept
  double scoreThresh = 0.05, nms = 0.5;
  int64_t detectionsPerImage = 300, topkCandidates = 1000;
};

// The last boxes' filter: roi_heads' (two-stage) or the dense head's.
struct PostProcess {
  double scoreThresh = 0.05, nms = 0.5;
  int64_t detectionsPerImage = 100;
};

struct DetectorOptions {
  std::string kind;
  int64_t classes = 91;  // with the background: torchvision's num_classes
  // The backbone's weights were trained (model.weights): FrozenBatchNorm2d
  // in MobileNetV3, as torchvision builds a detector with weights or weights_backbone.
  bool pretrained = false;
  // The MobileNetV3 backbone's BatchNorm frozen (model.detector.batchnorm);
  // unset: as the weights say (pretrained), torchvision's rule.
  std::optional<bool> frozenNorm;
  bool frozenNormOn() const { return frozenNorm.value_or(pretrained); }
  // Backbone stages trained, from the last; -1: torchvision's default (3
  // with trained weights, all without).
  int trainableBackboneLayers = -1;
  RcnnTransformOptions transform;
  RpnOptions rpn;            // two-stage
  RoiHeadsOptions roiHeads;  // two-stage
  RetinaOptions retina;      // single-stage
  SsdOptions ssd;            // SSDlite
  // SSDlite's MobileNetV3 with its last stage halved, as torchvision builds
  // it without a trained backbone (weights_backbone None; also under COCO's
  // weights); false for a classifier's state dict in model.weights.
  bool reducedTail = true;
  PostProcess postProcess() const;
  void setPostProcess(const PostProcess& p);
};

// torchvision's defaults for kind (its builder's keyword defaults). Throws
// std::invalid_argument for a kind that is not a detector here.
DetectorOptions detectorDefaults(const std::string& kind, int64_t classes);
// torchvision's builder defaults for config.kind with config.detector's
// sizes and post-processing over them, and FrozenBatchNorm2d when
// model.weights is set. classes: the data's (the detector's count adds the
// background).
DetectorOptions detectorOptions(const ModelConfig& config, int64_t classes);
// The names of kind's losses, in torchvision's order (its loss dict's keys).
std::vector<std::string> detectorLossParts(const std::string& kind);

using DetectionLosses = std::vector<std::pair<std::string, torch::Tensor>>;  // torchvision's order

class DetectorNetImpl : public torch::nn::Module {
 public:
  // Evaluation: each image (3 x h x w, floating point in [0, 1]) its boxes
  // in its own pixels, scores and labels (1 .. classes - 1). Uses the
  // modules' mode as it is (call eval() first, as with torchvision).
  virtual std::vector<Detections> detect(const std::vector<torch::Tensor>& images) = 0;
  // Training: the losses (detectorLossParts' names) for images and their
  // boxes (K x 4, pixels) and labels (K, int64, 1 .. classes - 1). Draws
  // from the default generator as torchvision does.
  virtual DetectionLosses losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                 const std::vector<torch::Tensor>& labels) = 0;
  // Mask R-CNN's training: with each image's instance masks too (K x h x
  // w, 0/1, at the image's size, in its boxes' order); its losses include
  // loss_mask. A detector without masks: std::invalid_argument.
  virtual DetectionLosses maskLosses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                     const std::vector<torch::Tensor>& labels, std::vector<torch::Tensor> masks);
  const DetectorOptions& options() const { return m_o; }

 protected:
  explicit DetectorNetImpl(DetectorOptions options) : m_o(std::move(options)) {}
  // torchvision's check of the transformed targets: every box has a positive width and height.
  static void checkPositiveBoxes(const std::vector<torch::Tensor>& boxes);
  DetectorOptions m_o;
};

// The detector options.kind names, built with options.
std::shared_ptr<DetectorNetImpl> makeDetector(const DetectorOptions& options);

// What loadDetectorWeights read.
struct DetectorWeights {
  int64_t tensors = 0;         // loaded from the file
  bool backboneOnly = false;   // a classifier's state dict: its features into backbone.body
  bool predictorKept = false;  // the file's class predictor (its classes are the model's)
  int64_t fileClasses = 0;     // the file's predictor's classes (with the background)
};

// A detector's state dict (its names start backbone., head. or roi_heads.),
// not a classifier's.
bool detectorStateDict(const NamedTensors& tensors);

// Loads a whole detector's state dict (torchvision's names; the RPN head's
// and the pyramid's names of older torchvision accepted) or a classifier's
// (MobileNetV3's or ResNet-50's features into the backbone). A detector
// whose class predictor (roi_heads.box_predictor, RetinaNet's
// head.classification_head.cls_logits, SSDlite's 1x1 convs
// head.classification_head.module_list.i.1) has other classes than the model
// keeps the model's own, as torchvision's fine-tuning tutorial replaces it.
// Throws ModelError naming the keys that are missing, unexpected, or of another shape.
DetectorWeights loadDetectorWeights(DetectorNetImpl& model, const NamedTensors& tensors, const std::string& path);

}  // namespace studio::detection
