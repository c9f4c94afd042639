// model.kind's registry (studio/model_kinds.h). Torch-free.
#include "studio/model_kinds.h"

#include "studio/errors.h"

namespace studio {

namespace {
// The families named by their kinds rather than by themselves.
bool familyOfKinds(ModelFamily f) {
  return f == ModelFamily::torchvision || f == ModelFamily::detector || f == ModelFamily::segmenter;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}
}  // namespace

const std::vector<DetectorFamily>& detectorFamilies() {
  using H = DetectorHead;
  using B = DetectorBackbone;
  static const std::vector<std::string> rcnn{"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"};
  static const std::vector<DetectorFamily> families{
      {"fasterrcnn_mobilenet_v3_large_320_fpn", H::FasterRcnn, B::MobileNetV3, true, rcnn},
      {"fasterrcnn_mobilenet_v3_large_fpn", H::FasterRcnn, B::MobileNetV3, false, rcnn},
      {"fasterrcnn_resnet50_fpn_v2", H::FasterRcnn, B::ResNet50, false, rcnn},
      {"retinanet_resnet50_fpn_v2", H::RetinaNet, B::ResNet50, false, {"classification", "bbox_regression"}},
      {"ssdlite320_mobilenet_v3_large", H::SsdLite, B::MobileNetV3, false, {"bbox_regression", "classification"}},
      {"maskrcnn_resnet50_fpn_v2",
       H::FasterRcnn,
       B::ResNet50,
       false,
       {"loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness", "loss_rpn_box_reg"},
       true}};
  return families;
}

namespace {
std::vector<std::string> detectorKindsWith(bool masks) {
  std::vector<std::string> k;
  for (const auto& f : detectorFamilies())
    if (f.masks == masks) k.push_back(f.kind);
  return k;
}
}  // namespace

const std::vector<std::string>& detectorKinds() {
  static const std::vector<std::string> kinds = detectorKindsWith(false);
  return kinds;
}

const std::vector<std::string>& maskDetectorKinds() {
  static const std::vector<std::string> kinds = detectorKindsWith(true);
  return kinds;
}

std::string maskDetectorKindsText() { return joined(maskDetectorKinds()); }

const DetectorFamily* findDetectorFamily(const std::string& kind) {
  for (const auto& f : detectorFamilies())
    if (f.kind == kind) return &f;
  return nullptr;
}

const DetectorFamily& detectorFamily(const std::string& kind) {
  if (const DetectorFamily* f = findDetectorFamily(kind)) return *f;
  throw InputError("model.kind " + kind + " is not a detector: give one of " + detectorKindsText());
}

std::string detectorKindsText() { return joined(detectorKinds()); }

const std::vector<std::string>& segmenterKinds() {
  static const std::vector<std::string> kinds{"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
                                              "deeplabv3_resnet50", "fcn_resnet50"};
  return kinds;
}

bool segmenterHasAux(const std::string& kind) { return kind != "lraspp_mobilenet_v3_large"; }

std::string segmenterKindsText() { return joined(segmenterKinds()); }

std::optional<ModelFamily> modelFamily(const std::string& kind) {
  if (isTorchvisionBackbone(kind)) return ModelFamily::torchvision;
  if (findDetectorFamily(kind)) return ModelFamily::detector;
  for (const auto& d : segmenterKinds())
    if (d == kind) return ModelFamily::segmenter;
  for (std::size_t i = 0; i < kModelFamilyNames.size(); ++i)
    if (kModelFamilyNames[i] == kind && !familyOfKinds(static_cast<ModelFamily>(i))) return static_cast<ModelFamily>(i);
  return std::nullopt;
}

bool isBuiltinModel(const std::string& kind) {
  const auto f = modelFamily(kind);
  return f == ModelFamily::mlp || f == ModelFamily::cnn || f == ModelFamily::resnet;
}

const std::vector<std::string>& modelKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (std::size_t i = 0; i < kModelFamilyNames.size(); ++i)
      if (!familyOfKinds(static_cast<ModelFamily>(i))) k.emplace_back(kModelFamilyNames[i]);
    for (const auto& b : torchvisionBackbones()) k.push_back(b);
    for (const auto& d : detectorFamilies()) k.push_back(d.kind);
    for (const auto& d : segmenterKinds()) k.push_back(d);
    return k;
  }();
  return kinds;
}

}  // namespace studio
