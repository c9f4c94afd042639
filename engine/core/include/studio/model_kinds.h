#pragma once
// model.kind's values, from one registry: the studio's own models and a
// TorchScript file by name (ModelFamily's names), then torchvision's
// classifiers (torchvisionBackbones()). Code asks for a family, never
// compares the kind with a spelt-out name. Torch-free.
// Thread: immutable data, any thread.

#include <optional>
#include <string>
#include <vector>

#include "studio/train_config.h"

namespace studio {

STUDIO_CHOICE(ModelFamily, mlp, cnn, resnet, torchscript, torchvision, detector, segmenter)

// The family of a model.kind; none for a name that is no model's
// (validate() names it with the list).
std::optional<ModelFamily> modelFamily(const std::string& kind);
inline bool isModel(const std::string& kind, ModelFamily family) { return modelFamily(kind) == family; }
// mlp, cnn or resnet: the studio's own layers (width, depth, activation
// checkpointing, synchronised BatchNorm).
bool isBuiltinModel(const std::string& kind);
// Every model.kind in the form's order: the families' names but
// torchvision, then torchvision's classifiers.
const std::vector<std::string>& modelKinds();
// model.kind values that are torchvision's detectors (task.kind detection;
// Mask R-CNN's family is not among them).
const std::vector<std::string>& detectorKinds();
// model.kind values of the detectors with a mask per box (task.kind
// instance_segmentation): Mask R-CNN's.
const std::vector<std::string>& maskDetectorKinds();
std::string maskDetectorKindsText();

// model.kind values that are torchvision's semantic segmentation models
// (task.kind segmentation), in the order the settings list them.
const std::vector<std::string>& segmenterKinds();
// Whether the segmenter has an auxiliary head (model.segmenter.aux_loss):
// FCN and DeepLabV3 do, LRASPP does not.
bool segmenterHasAux(const std::string& kind);
// "lraspp_mobilenet_v3_large, ...": for messages.
std::string segmenterKindsText();

// Each detector's traits, in one registry: no code outside it tells the
// families apart by their names (issue 57, item 3).
enum class DetectorHead { FasterRcnn, RetinaNet, SsdLite };
enum class DetectorBackbone { MobileNetV3, ResNet50 };
struct DetectorFamily {
  std::string kind;
  DetectorHead head = DetectorHead::FasterRcnn;
  DetectorBackbone backbone = DetectorBackbone::MobileNetV3;
  // The _320_ model's defaults: images to 320-640 px, 150 proposals kept
  // before and after NMS in evaluation, proposals scored under 0.05 dropped.
  bool lowResolution = false;
  // Its losses as torchvision's dict names them, in its order (their sum trains).
  std::vector<std::string> lossParts;
  // Mask R-CNN: a mask per detection (issue 61, item 2): task.kind
  // instance_segmentation's model.kind (maskDetectorKinds), not detection's
  // (detectorKinds leaves it out).
  bool masks = false;
  // Two-stage (an RPN's proposals, then box heads: model.detector.rois_per_image
  // applies) or single-stage (RetinaNet, SSDlite).
  bool twoStage() const { return head == DetectorHead::FasterRcnn; }
  // SSDlite resizes every image to 320 x 320 itself: model.detector.min_size
  // and max_size do not apply.
  bool fixedSize() const { return head == DetectorHead::SsdLite; }
  // torchvision's builder freezes the backbone's BatchNorm (FrozenBatchNorm2d)
  // when it has trained weights: the Faster R-CNN MobileNetV3 detectors
  // (model.detector.batchnorm applies); the others keep BatchNorm2d.
  bool normFollowsWeights() const {
    return head == DetectorHead::FasterRcnn && backbone == DetectorBackbone::MobileNetV3;
  }
};
const std::vector<DetectorFamily>& detectorFamilies();
// None for a kind that is no detector's.
const DetectorFamily* findDetectorFamily(const std::string& kind);
// Throws InputError naming the detectors for a kind that is none of them.
const DetectorFamily& detectorFamily(const std::string& kind);
// "fasterrcnn_mobilenet_v3_large_320_fpn, fasterrcnn_mobilenet_v3_large_fpn": for messages.
std::string detectorKindsText();

}  // namespace studio
