#include "segmentation/segmenter_weights.h"

#include <map>

#include "studio/errors.h"

namespace studio {
namespace {

bool startsWith(const std::string& s, const std::string& start) { return s.rfind(start, 0) == 0; }
bool endsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// A classifier's tensor's name in the segmenter's backbone; "" for its
// classifier (left out, as weights_backbone leaves it).
std::string backboneName(const std::string& key, bool resnet50) {
  if (resnet50) return startsWith(key, "fc.") ? "" : "backbone." + key;
  return startsWith(key, "features.") ? "backbone." + key.substr(9) : "";
}

std::string shapeText(const torch::Tensor& t) { return c10::str(t.sizes()); }

}  // namespace

SegmenterWeights loadSegmenterWeights(torch::nn::Module& net, const NamedTensors& file, const std::string& path,
                                      bool keepHead, bool resnet50) {
  std::map<std::string, torch::Tensor> mine;
  for (const auto& p : net.named_parameters()) mine[p.key()] = p.value();
  for (const auto& b : net.named_buffers()) mine[b.key()] = b.value();
  bool segmenterFile = false;
  for (const auto& [key, t] : file) segmenterFile = segmenterFile || startsWith(key, "backbone.");
  SegmenterWeights w;
  w.backboneOnly = !segmenterFile;
  // The heads' class layers: those whose first dimension is the file's classes.
  for (const char* head : {"classifier.4.weight", "classifier.high_classifier.weight"})
    for (const auto& [key, t] : file)
      if (key == head) w.fileClasses = t.size(0);
  std::map<std::string, bool> loaded;
  torch::NoGradGuard noGrad;
  int64_t newLayers = 0;
  for (const auto& [key, t] : file) {
    const std::string name = segmenterFile ? key : backboneName(key, resnet50);
    if (name.empty()) continue;
    const auto it = mine.find(name);
    if (it == mine.end()) {
      // torchvision's BatchNorm counts its batches; an auxiliary head the model was not built with.
      if (endsWith(key, "num_batches_tracked") || startsWith(key, "aux_classifier.")) continue;
      throw ModelError("model.weights " + path + " holds " + key + ", which this segmenter does not have" +
                       (segmenterFile ? ": are they weights of another model.kind?"
                                      : ": a classifier's weights go into the backbone of the same network (" +
                                            std::string(resnet50 ? "ResNet-50" : "MobileNetV3-Large") + ")"));
    }
    if (it->second.sizes() != t.sizes()) {
      const bool classLayer = segmenterFile && w.fileClasses > 0 && t.dim() >= 1 && t.size(0) == w.fileClasses &&
                              (startsWith(key, "classifier.") || startsWith(key, "aux_classifier."));
      if (!classLayer)
        throw ModelError("model.weights " + path + ": " + key + " is " + shapeText(t) + " there and " +
                         shapeText(it->second) + " here: are they weights of another model.kind?");
      if (keepHead)
        throw ModelError("model.keep_head: the weights' head in " + path + " has " + std::to_string(w.fileClasses) +
                         " classes and the data " + std::to_string(it->second.size(0)) +
                         ": turn model.keep_head off for a new head for the data's classes");
      ++newLayers;
      continue;
    }
    it->second.copy_(t.to(it->second.dtype()));
    loaded[name] = true;
    ++w.tensors;
  }
  for (const auto& [name, t] : mine)
    if (startsWith(name, "backbone.") && !endsWith(name, "num_batches_tracked") && !loaded.count(name))
      throw ModelError(
          "model.weights " + path + " has no " +
          (segmenterFile ? name : (resnet50 ? "" : "features.") + name.substr(9) + " (" + name + " of the segmenter)") +
          ": they are not this segmenter's nor its backbone's weights");
  w.headKept = segmenterFile && newLayers == 0;
  return w;
}

}  // namespace studio
