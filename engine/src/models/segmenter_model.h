#pragma once
// A torchvision segmenter (task.kind segmentation) as the engine's Model:
// its parameters, state and BatchNorm handling are any module's
// (ModuleModel), so the optimizer, checkpoints, the moving average and
// torchrun treat it as they treat a classifier. forward() gives the main
// head's logits per pixel ([N, classes, H, W]); the segmentation task
// (train/tasks/segmentation.cpp) takes the auxiliary head's too through
// segmentPixels().
// Thread: engine thread.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/module_model.h"
#include "segmentation/segmenters.h"

namespace studio {

class SegmenterModel : public ModuleModel {
 public:
  SegmenterModel(const ModelConfig& config, int64_t classes);
  torch::Tensor forward(const torch::Tensor& x) override { return m_net->forward(x).out; }
  std::pair<torch::Tensor, torch::Tensor> segmentPixels(const torch::Tensor& x) override {
    SegmenterOutput o = m_net->forward(x);
    return {o.out, o.aux};
  }
  // Its top-level parts (the backbone, the head and the auxiliary head) and their parameters.
  std::vector<LayerSummary> layers(const torch::Tensor& sample) override;
  std::string description() const override;
  // model.safetensors (torchvision's names) and model.py, whose build()
  // makes torchvision's segmenter with the run's classes and loads it strict.
  std::vector<std::string> exportTo(const std::string& dir) override;
  // preprocessing.json's "segmenter": its kind and auxiliary head.
  void describeExport(nlohmann::json& preprocessing) const override;
  // A segmenter's state dict, or a classifier's into the backbone
  // (segmentation/segmenter_weights.h).
  std::string loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) override;

 private:
  SegmenterModel(const ModelConfig& config, int64_t classes, std::shared_ptr<SegmentationNet> net);
  std::string m_kind;
  int64_t m_classes = 0;
  bool m_aux = false;
  std::shared_ptr<SegmentationNet> m_net;
};

}  // namespace studio
