#include "models/detector_model.h"

#include <stdexcept>

#include "run/safetensors_file.h"
#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {

detection::FasterRcnnOptions detectorOptions(const ModelConfig& config, int64_t classes) {
  detection::FasterRcnnOptions o = detection::fasterRcnnDefaults(config.kind, classes + 1);
  const auto& d = config.detector;
  o.pretrained = !config.weights.empty();
  if (d.min_size > 0) o.transform.minSizes = {d.min_size};
  if (d.max_size > 0) o.transform.maxSize = d.max_size;
  o.roiHeads.scoreThresh = d.score_threshold;
  o.roiHeads.nms = d.nms_iou;
  o.roiHeads.detectionsPerImage = d.detections_per_image;
  o.roiHeads.batchPerImage = d.rois_per_image;
  return o;
}

DetectorModel::DetectorModel(const ModelConfig& config, int64_t classes)
    : DetectorModel(detection::FasterRcnn(detectorOptions(config, classes))) {}

DetectorModel::DetectorModel(detection::FasterRcnn net) : ModuleModel(net.ptr()), m_net(std::move(net)) {}

torch::Tensor DetectorModel::forward(const torch::Tensor&) {
  throw std::logic_error(
      m_net->options().kind +
      ": a detector's forward pass takes its images' boxes (DetectionTask calls losses() and detect())");
}

std::vector<LayerSummary> DetectorModel::layers(const torch::Tensor&) {
  std::vector<LayerSummary> rows;
  for (const auto& child : m_net->named_children()) {
    int64_t params = 0;
    for (const auto& p : child.value()->parameters()) params += p.numel();
    LayerSummary row;
    row.name = child.key();
    // torchvision's classes for the parts.
    row.type = row.name == "backbone" ? "BackboneWithFPN" : row.name == "rpn" ? "RegionProposalNetwork" : "RoIHeads";
    row.parameters = params;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string DetectorModel::description() const {
  return m_net->options().kind + " (" + std::to_string(m_net->options().classes - 1) + " classes and the background)";
}

std::vector<std::string> DetectorModel::exportTo(const std::string& dir) {
  const std::string tensors = dir + "/model.safetensors";
  writeFileAtomically(tensors, safetensorsBytes(namedState(), {{"format", "pt"}, {"model", m_net->options().kind}}));
  return {tensors};
}

}  // namespace studio
