#include "detection/detector_net.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "detection/faster_rcnn.h"
#include "detection/retinanet.h"
#include "studio/errors.h"
#include "studio/model_kinds.h"  // detectorKinds()

namespace studio::detection {

PostProcess DetectorOptions::postProcess() const {
  if (singleStage(kind)) return {retina.scoreThresh, retina.nms, retina.detectionsPerImage};
  return {roiHeads.scoreThresh, roiHeads.nms, roiHeads.detectionsPerImage};
}

void DetectorOptions::setPostProcess(const PostProcess& p) {
  if (singleStage(kind)) {
    retina.scoreThresh = p.scoreThresh;
    retina.nms = p.nms;
    retina.detectionsPerImage = p.detectionsPerImage;
    return;
  }
  roiHeads.scoreThresh = p.scoreThresh;
  roiHeads.nms = p.nms;
  roiHeads.detectionsPerImage = p.detectionsPerImage;
}

DetectorOptions detectorDefaults(const std::string& kind, int64_t classes) {
  const auto& kinds = studio::detectorKinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw std::invalid_argument("unknown detector \"" + kind + "\"");
  DetectorOptions o;
  o.kind = kind;
  o.classes = classes;
  if (singleStage(kind)) {
    // retinanet.py's _default_anchorgen: three sizes an octave's thirds
    // apart (truncated to integers) on each of the five levels.
    for (const double x : {32.0, 64.0, 128.0, 256.0, 512.0})
      o.retina.anchorSizes.push_back(
          {x, std::trunc(x * std::pow(2.0, 1.0 / 3)), std::trunc(x * std::pow(2.0, 2.0 / 3))});
    o.retina.aspectRatios.assign(5, {0.5, 1.0, 2.0});
    return o;
  }
  if (resnetBackbone(kind)) {
    // fasterrcnn_resnet50_fpn_v2: _default_anchorgen (a size per level of
    // five), RPNHead(conv_depth=2), FastRCNNConvFCHead([256] * 4, [1024]).
    o.rpn.anchorSizes = {{32}, {64}, {128}, {256}, {512}};
    o.rpn.aspectRatios.assign(5, {0.5, 1.0, 2.0});
    o.rpn.convDepth = 2;
    o.roiHeads.convLayers = {256, 256, 256, 256};
    return o;
  }
  // _fasterrcnn_mobilenet_v3_large_fpn: three levels of anchors 32 .. 512.
  o.rpn.anchorSizes.assign(3, {32, 64, 128, 256, 512});
  o.rpn.aspectRatios.assign(3, {0.5, 1.0, 2.0});
  if (kind == "fasterrcnn_mobilenet_v3_large_320_fpn") {
    o.transform.minSizes = {320};
    o.transform.maxSize = 640;
    o.rpn.preNmsTest = 150;
    o.rpn.postNmsTest = 150;
    o.rpn.scoreThresh = 0.05;
  }
  return o;
}

std::vector<std::string> detectorLossParts(const std::string& kind) {
  if (singleStage(kind)) return {"classification", "bbox_regression"};
  return {"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"};
}

void DetectorNetImpl::checkPositiveBoxes(const std::vector<torch::Tensor>& boxes) {
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].numel() == 0) continue;
    const torch::Tensor bad = (boxes[i].slice(1, 2) <= boxes[i].slice(1, 0, 2)).any(1);
    if (bad.any().item<bool>())
      throw std::invalid_argument("detection: all boxes must have positive height and width; image " +
                                  std::to_string(i) + " has " + std::to_string(bad.sum().item<int64_t>()) +
                                  " that do not");
  }
}

std::shared_ptr<DetectorNetImpl> makeDetector(const DetectorOptions& options) {
  if (singleStage(options.kind)) return RetinaNet(options).ptr();
  return FasterRcnn(options).ptr();
}

namespace {

// The names torchvision's _load_from_state_dict still accepts (RPNHead and
// FeaturePyramidNetwork before version 2).
std::string currentName(const std::string& name) {
  static const std::regex rpn(R"(^rpn\.head\.conv\.(weight|bias)$)");
  static const std::regex fpn(R"(^backbone\.fpn\.(inner|layer)_blocks\.(\d+)\.(weight|bias)$)");
  if (std::regex_match(name, rpn)) return std::regex_replace(name, rpn, "rpn.head.conv.0.0.$1");
  if (std::regex_match(name, fpn)) return std::regex_replace(name, fpn, "backbone.fpn.$1_blocks.$2.0.$3");
  return name;
}

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
  return out;
}

}  // namespace

DetectorWeights loadDetectorWeights(DetectorNetImpl& model, const NamedTensors& tensors, const std::string& path) {
  DetectorWeights info;
  std::map<std::string, torch::Tensor> file;
  bool allModule = !tensors.empty();
  for (const auto& [name, t] : tensors) allModule = allModule && name.rfind("module.", 0) == 0;
  bool detector = false;
  for (const auto& [raw, t] : tensors) {
    const std::string name = allModule ? raw.substr(7) : raw;
    detector =
        detector || name.rfind("backbone.", 0) == 0 || name.rfind("roi_heads.", 0) == 0 || name.rfind("head.", 0) == 0;
    file[name] = t;
  }
  std::map<std::string, torch::Tensor> wanted;
  if (detector) {
    for (const auto& [name, t] : file) wanted[currentName(name)] = t;
  } else {
    info.backboneOnly = true;
    // A classifier's features (MobileNetV3's "features.*", ResNet's
    // "conv1.*", "layer1.*", ..) into the body; its own head left out.
    for (const auto& [name, t] : file) {
      if (name.rfind("classifier.", 0) == 0 || name.rfind("fc.", 0) == 0) continue;
      wanted["backbone.body." + (name.rfind("features.", 0) == 0 ? name.substr(9) : name)] = t;
    }
  }
  // The class predictor: Faster R-CNN's box predictor (its classes and
  // their boxes), RetinaNet's class logits (its classes per anchor).
  const bool retina = singleStage(model.options().kind);
  const std::string predictor = retina ? "head.classification_head.cls_logits." : "roi_heads.box_predictor.";
  if (auto it = wanted.find(predictor + (retina ? "weight" : "cls_score.weight")); it != wanted.end()) {
    info.fileClasses = it->second.size(0) / (retina ? anchorsPerPlace(model.options().retina) : 1);
    info.predictorKept = info.fileClasses == model.options().classes;
    if (!info.predictorKept)
      for (auto w = wanted.begin(); w != wanted.end();)
        w = w->first.rfind(predictor, 0) == 0 ? wanted.erase(w) : std::next(w);
  }
  std::map<std::string, torch::Tensor> own;
  for (const auto& p : model.named_parameters()) own[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) own[b.key()] = b.value();
  std::vector<std::string> missing, unexpected, shapes;
  for (const auto& [name, t] : own) {
    if (wanted.count(name) || endsWith(name, "num_batches_tracked")) continue;
    if (info.backboneOnly && name.rfind("backbone.body.", 0) != 0) continue;
    if (!info.predictorKept && name.rfind(predictor, 0) == 0) continue;
    missing.push_back(name);
  }
  for (const auto& [name, t] : wanted) {
    auto it = own.find(name);
    if (it == own.end()) {
      if (!endsWith(name, "num_batches_tracked")) unexpected.push_back(name);
    } else if (it->second.sizes() != t.sizes()) {
      std::ostringstream s;
      s << name << " is " << t.sizes() << " in the file, " << it->second.sizes() << " in " << model.options().kind;
      shapes.push_back(s.str());
    }
  }
  if (!missing.empty() || !unexpected.empty() || !shapes.empty()) {
    std::string why = path + " does not fit " + model.options().kind + ":";
    if (!missing.empty()) why += " it lacks " + listed(missing) + ";";
    if (!unexpected.empty()) why += " it has " + listed(unexpected) + " that the model has not;";
    if (!shapes.empty()) why += " " + listed(shapes) + ";";
    why.pop_back();
    throw ModelError(why);
  }
  torch::NoGradGuard noGrad;
  for (const auto& [name, t] : wanted) {
    auto it = own.find(name);
    if (it == own.end()) continue;
    it->second.copy_(t);
    ++info.tensors;
  }
  return info;
}

}  // namespace studio::detection
