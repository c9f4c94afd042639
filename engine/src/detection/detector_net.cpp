#include "detection/detector_net.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "detection/faster_rcnn.h"
#include "detection/retinanet.h"
#include "detection/ssdlite.h"
#include "studio/errors.h"
#include "studio/model_kinds.h"  // the detector registry

namespace studio::detection {

namespace {

// The registry's family of a detector kind (studio/model_kinds.h).
DetectorHead headOf(const std::string& kind) { return detectorFamily(kind).head; }

// The post-processing fields each family's options hold under the same names.
template <typename Family>
PostProcess postProcessOf(const Family& f) {
  return {f.scoreThresh, f.nms, f.detectionsPerImage};
}
template <typename Family>
void setPostProcessOf(Family& f, const PostProcess& p) {
  f.scoreThresh = p.scoreThresh;
  f.nms = p.nms;
  f.detectionsPerImage = p.detectionsPerImage;
}

}  // namespace

PostProcess DetectorOptions::postProcess() const {
  switch (headOf(kind)) {
    case DetectorHead::SsdLite:
      return postProcessOf(ssd);
    case DetectorHead::RetinaNet:
      return postProcessOf(retina);
    case DetectorHead::FasterRcnn:
      break;
  }
  return postProcessOf(roiHeads);
}

void DetectorOptions::setPostProcess(const PostProcess& p) {
  switch (headOf(kind)) {
    case DetectorHead::SsdLite:
      return setPostProcessOf(ssd, p);
    case DetectorHead::RetinaNet:
      return setPostProcessOf(retina, p);
    case DetectorHead::FasterRcnn:
      break;
  }
  setPostProcessOf(roiHeads, p);
}

DetectorOptions detectorOptions(const ModelConfig& config, int64_t classes) {
  DetectorOptions o = detectorDefaults(config.kind, classes + 1);
  const auto& d = config.detector;
  o.pretrained = !config.weights.empty();
  if (d.batchnorm != DetectorNorm::auto_) o.frozenNorm = d.batchnorm == DetectorNorm::frozen;
  if (d.min_size > 0) o.transform.minSizes = {d.min_size};
  if (d.max_size > 0) o.transform.maxSize = d.max_size;
  o.setPostProcess({d.score_threshold, d.nms_iou, d.detections_per_image});
  o.roiHeads.batchPerImage = d.rois_per_image;
  return o;
}

DetectorOptions detectorDefaults(const std::string& kind, int64_t classes) {
  const DetectorFamily* family = findDetectorFamily(kind);
  if (!family) throw std::invalid_argument("unknown detector \"" + kind + "\"");
  DetectorOptions o;
  o.kind = kind;
  o.classes = classes;
  if (family->head == DetectorHead::SsdLite) {
    // ssdlite320_mobilenet_v3_large: every image to 320 x 320, scaled to
    // [-1, 1], batched without padding (size_divisible 1).
    o.ssd = ssdliteDefaults();
    o.transform.minSizes = {320};
    o.transform.maxSize = 320;
    o.transform.fixedSize = ImageSize{320, 320};
    o.transform.mean = {0.5, 0.5, 0.5};
    o.transform.std = {0.5, 0.5, 0.5};
    o.transform.sizeDivisible = 1;
    return o;
  }
  if (family->head == DetectorHead::RetinaNet) {
    // retinanet.py's _default_anchorgen: three sizes an octave's thirds
    // apart (truncated to integers) on each of the five levels.
    for (const double x : {32.0, 64.0, 128.0, 256.0, 512.0})
      o.retina.anchorSizes.push_back(
          {x, std::trunc(x * std::pow(2.0, 1.0 / 3)), std::trunc(x * std::pow(2.0, 2.0 / 3))});
    o.retina.aspectRatios.assign(5, {0.5, 1.0, 2.0});
    return o;
  }
  if (family->backbone == DetectorBackbone::ResNet50) {
    // fasterrcnn_resnet50_fpn_v2: _default_anchorgen (a size per level of
    // five), RPNHead(conv_depth=2), FastRCNNConvFCHead([256] * 4, [1024]).
    o.rpn.anchorSizes = {{32}, {64}, {128}, {256}, {512}};
    o.rpn.aspectRatios.assign(5, {0.5, 1.0, 2.0});
    o.rpn.convDepth = 2;
    o.roiHeads.convLayers = {256, 256, 256, 256};
    // maskrcnn_resnet50_fpn_v2: the same, with MaskRCNNHeads([256] * 4, BatchNorm2d).
    o.roiHeads.masks = family->masks;
    return o;
  }
  // _fasterrcnn_mobilenet_v3_large_fpn: three levels of anchors 32 .. 512.
  o.rpn.anchorSizes.assign(3, {32, 64, 128, 256, 512});
  o.rpn.aspectRatios.assign(3, {0.5, 1.0, 2.0});
  if (family->lowResolution) {
    o.transform.minSizes = {320};
    o.transform.maxSize = 640;
    o.rpn.preNmsTest = 150;
    o.rpn.postNmsTest = 150;
    o.rpn.scoreThresh = 0.05;
  }
  return o;
}

std::vector<std::string> detectorLossParts(const std::string& kind) { return detectorFamily(kind).lossParts; }

DetectionLosses DetectorNetImpl::maskLosses(const std::vector<torch::Tensor>&, std::vector<torch::Tensor>,
                                            const std::vector<torch::Tensor>&, std::vector<torch::Tensor>) {
  throw std::invalid_argument("detection: " + m_o.kind + " finds boxes, not masks");
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
  switch (headOf(options.kind)) {
    case DetectorHead::SsdLite:
      return SsdLite(options).ptr();
    case DetectorHead::RetinaNet:
      return RetinaNet(options).ptr();
    case DetectorHead::FasterRcnn:
      break;
  }
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

// A MobileNetV3 classifier's "features.N.…" in SSDLiteFeatureExtractorMobileNet:
// blocks 0 .. 12 and block 13's expansion in features.0, the rest in features.1.
std::string ssdBackboneName(const std::string& name) {
  static const std::regex block(R"(^features\.(\d+)\.(.*)$)");
  static const std::regex split(R"(^block\.(\d+)\.(.*)$)");
  std::smatch m;
  if (!std::regex_match(name, m, block)) return "backbone." + name;
  const int n = std::stoi(m[1]);
  const std::string rest = m[2];
  if (n < 13) return "backbone.features.0." + std::to_string(n) + "." + rest;
  if (n > 13) return "backbone.features.1." + std::to_string(n - 13) + "." + rest;
  std::smatch k;
  if (!std::regex_match(rest, k, split)) return "backbone.features.0.13." + rest;
  return k[1] == "0" ? "backbone.features.0.13." + std::string(k[2])
                     : "backbone.features.1.0." + std::string(k[1]) + "." + std::string(k[2]);
}

// The class predictor's tensors, which a file of other classes does not give
// (Mask R-CNN's mask predictor too, replaced whole as torchvision's
// fine-tuning tutorial replaces it).
bool predictorName(const std::string& kind, const std::string& name) {
  static const std::regex ssd(R"(^head\.classification_head\.module_list\.\d+\.1\.(weight|bias)$)");
  if (headOf(kind) == DetectorHead::SsdLite) return std::regex_match(name, ssd);
  if (detectorFamily(kind).masks && name.rfind("roi_heads.mask_predictor.", 0) == 0) return true;
  return name.rfind(headOf(kind) == DetectorHead::RetinaNet ? "head.classification_head.cls_logits."
                                                            : "roi_heads.box_predictor.",
                    0) == 0;
}

// The file's tensors by name, DataParallel's "module." removed when every name has it.
std::map<std::string, torch::Tensor> byName(const NamedTensors& tensors) {
  bool allModule = !tensors.empty();
  for (const auto& [name, t] : tensors) allModule = allModule && name.rfind("module.", 0) == 0;
  std::map<std::string, torch::Tensor> file;
  for (const auto& [raw, t] : tensors) file[allModule ? raw.substr(7) : raw] = t;
  return file;
}

// A detector's names (backbone., head. or roi_heads.), not a classifier's.
bool detectorNames(const std::map<std::string, torch::Tensor>& file) {
  for (const auto& [name, t] : file)
    if (name.rfind("backbone.", 0) == 0 || name.rfind("roi_heads.", 0) == 0 || name.rfind("head.", 0) == 0) return true;
  return false;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
  return out;
}

}  // namespace

bool detectorStateDict(const NamedTensors& tensors) { return detectorNames(byName(tensors)); }

DetectorWeights loadDetectorWeights(DetectorNetImpl& model, const NamedTensors& tensors, const std::string& path) {
  DetectorWeights info;
  const std::map<std::string, torch::Tensor> file = byName(tensors);
  const std::string& kind = model.options().kind;
  const bool ssd = headOf(kind) == DetectorHead::SsdLite;
  std::map<std::string, torch::Tensor> wanted;
  if (detectorNames(file)) {
    for (const auto& [name, t] : file) wanted[currentName(name)] = t;
  } else {
    info.backboneOnly = true;
    // A classifier's features (MobileNetV3's "features.*", ResNet's
    // "conv1.*", "layer1.*", ..) into the body; its own head left out.
    for (const auto& [name, t] : file) {
      if (name.rfind("classifier.", 0) == 0 || name.rfind("fc.", 0) == 0) continue;
      wanted[ssd ? ssdBackboneName(name)
                 : "backbone.body." + (name.rfind("features.", 0) == 0 ? name.substr(9) : name)] = t;
    }
  }
  // The class predictor: Faster R-CNN's box predictor (its classes and
  // their boxes), RetinaNet's class logits and SSDlite's (its classes per anchor).
  const bool retina = headOf(kind) == DetectorHead::RetinaNet;
  const std::string logits = ssd      ? "head.classification_head.module_list.0.1.weight"
                             : retina ? "head.classification_head.cls_logits.weight"
                                      : "roi_heads.box_predictor.cls_score.weight";
  if (auto it = wanted.find(logits); it != wanted.end()) {
    const int64_t perPlace = ssd      ? ssdAnchorsPerPlace(model.options().ssd)
                             : retina ? anchorsPerPlace(model.options().retina)
                                      : 1;
    info.fileClasses = it->second.size(0) / perPlace;
    info.predictorKept = info.fileClasses == model.options().classes;
    if (!info.predictorKept)
      for (auto w = wanted.begin(); w != wanted.end();)
        w = predictorName(kind, w->first) ? wanted.erase(w) : std::next(w);
  }
  const std::string body = ssd ? "backbone.features." : "backbone.body.";
  std::map<std::string, torch::Tensor> own;
  for (const auto& p : model.named_parameters()) own[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) own[b.key()] = b.value();
  std::vector<std::string> missing, unexpected, shapes;
  for (const auto& [name, t] : own) {
    if (wanted.count(name) || endsWith(name, "num_batches_tracked")) continue;
    if (info.backboneOnly && name.rfind(body, 0) != 0) continue;
    if (!info.predictorKept && predictorName(kind, name)) continue;
    missing.push_back(name);
  }
  for (const auto& [name, t] : wanted) {
    auto it = own.find(name);
    if (it == own.end()) {
      if (!endsWith(name, "num_batches_tracked")) unexpected.push_back(name);
    } else if (it->second.sizes() != t.sizes()) {
      std::ostringstream s;
      s << name << " is " << t.sizes() << " in the file, " << it->second.sizes() << " in " << kind;
      shapes.push_back(s.str());
    }
  }
  if (!missing.empty() || !unexpected.empty() || !shapes.empty()) {
    std::string why = path + " does not fit " + kind + ":";
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
