#pragma once
// A torchvision detector (task.kind detection) as the engine's Model: its
// parameters, state and BatchNorm handling are any module's (ModuleModel),
// so the optimizer, checkpoints, the moving average and torchrun treat it
// as they treat a classifier. Its forward pass needs the boxes: the
// detection task (train/tasks/detection.cpp) calls boxLosses() and
// detectBoxes(), which every Model has (models/model.h).
// Thread: engine thread.

#include <memory>
#include <string>
#include <vector>

#include "detection/detector_net.h"
#include "models/module_model.h"

namespace studio {

class DetectorModel : public ModuleModel {
 public:
  DetectorModel(const ModelConfig& config, int64_t classes);
  // A detector built with its own options (tests/detector_check's export).
  explicit DetectorModel(std::shared_ptr<detection::DetectorNetImpl> net);
  // Refuses: a detector's forward pass takes its images' boxes.
  torch::Tensor forward(const torch::Tensor& x) override;
  // Its top-level parts (the backbone, the RPN and the RoI heads, or the one-stage head) and their parameters.
  std::vector<LayerSummary> layers(const torch::Tensor& sample) override;
  std::string description() const override;
  // model.safetensors (torchvision's names) and model.py, whose build()
  // makes torchvision's detector with the run's options and loads it strict.
  std::vector<std::string> exportTo(const std::string& dir) override;
  // preprocessing.json's "detector": the sizes and post-processing it was built with.
  void describeExport(nlohmann::json& preprocessing) const override;
  // A detector's state dict, or a classifier's into the backbone (detection::loadDetectorWeights).
  std::string loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) override;
  detection::DetectionLosses boxLosses(const std::vector<torch::Tensor>& images,
                                       const std::vector<torch::Tensor>& boxes,
                                       const std::vector<torch::Tensor>& labels,
                                       const std::vector<torch::Tensor>& masks = {}) override {
    return masks.empty() ? m_net->losses(images, boxes, labels) : m_net->maskLosses(images, boxes, labels, masks);
  }
  std::vector<detection::Detections> detectBoxes(const std::vector<torch::Tensor>& images) override {
    return m_net->detect(images);
  }
  const detection::RcnnTransformOptions& boxPlacement() const override { return m_net->options().transform; }
  // The data's classes (without the background).
  int64_t classes() const { return m_net->options().classes - 1; }

 private:
  std::shared_ptr<detection::DetectorNetImpl> m_net;
};

}  // namespace studio
