#pragma once
// torchvision's classifiers (model.kind resnet18, resnet34, resnet50,
// mobilenet_v3_small, mobilenet_v3_large, efficientnet_b0) behind the Model
// interface, with torchvision's parameter and buffer names
// (nets/nets.h), so a state dict torchvision saves loads into
// them (loadStartingWeights) and their export loads into
// torchvision.models.<kind>(num_classes=...).
// They take 3-channel images; a 1-channel batch is repeated to 3 channels,
// as a grayscale photo is converted to RGB.
// Thread: engine thread.

#include "models/module_model.h"
#include "nets/nets.h"

namespace studio {

class TorchvisionModel : public ModuleModel {
 public:
  TorchvisionModel(const std::string& kind, const InputShape& input, int64_t classes);
  torch::Tensor forward(const torch::Tensor& x) override;
  // "features.3" for features.3.block.0.0.weight, "classifier" for the
  // classifier's layers; else the first component ("layer1", "fc").
  std::string layerGroup(const std::string& parameter) const override;
  std::vector<LayerSummary> layers(const torch::Tensor& sample) override;
  std::string description() const override { return m_kind; }
  // model.pt (torch.save state dict), model.safetensors, and model.py, which
  // builds torchvision.models.<kind>(num_classes=...).
  std::vector<std::string> exportTo(const std::string& dir) override;
  torch::Tensor forwardWithStage(const torch::Tensor& x, torch::Tensor& stage, std::string& name) override;
  // A torchvision classifier's state dict (loadPretrainedWeights).
  std::string loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) override;
  // features: the input of the last stage (the classifier).
  torch::Tensor forwardWithFeatures(const torch::Tensor& x, torch::Tensor& features) override;
  // The classifier's name ("fc", "classifier.3"), its parameters "<head>.weight" and "<head>.bias".
  const std::string& head() const { return m_net->head; }
  int64_t classes() const { return m_classes; }

 private:
  TorchvisionModel(std::shared_ptr<TorchvisionNet> net, const std::string& kind, const InputShape& input,
                   int64_t classes);
  torch::Tensor toRgb(const torch::Tensor& x) const;
  std::shared_ptr<TorchvisionNet> m_net;
  std::string m_kind;
  InputShape m_input;
  int64_t m_classes;
};

}  // namespace studio
