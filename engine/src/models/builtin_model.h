#pragma once
// The built-in classifiers (models/model_factory.h) behind the Model
// interface. Parameter names are those of a Python nn.Sequential of the same
// layers ("0.weight", "1.running_mean"), so the exported state dict loads
// into it.
// Thread: engine thread.

#include <torch/nn/modules/container/sequential.h>

#include "models/module_model.h"

namespace studio {

class BuiltinModel : public ModuleModel {
 public:
  BuiltinModel(const ModelConfig& config, const InputShape& input, int64_t classes);
  torch::Tensor forward(const torch::Tensor& x) override;
  std::vector<LayerSummary> layers(const torch::Tensor& sample) override;
  std::string description() const override { return m_description; }
  // model.pt (torch.save state dict), model.safetensors (the same tensors),
  // and model.py, which rebuilds these layers in plain PyTorch (build()).
  std::vector<std::string> exportTo(const std::string& dir) override;
  std::string pythonSource() const;
  std::string checkpointActivations(int64_t blocksPerSegment) override;
  torch::Tensor forwardWithStage(const torch::Tensor& x, torch::Tensor& stage, std::string& name) override;
  torch::Tensor forwardWithFeatures(const torch::Tensor& x, torch::Tensor& features) override;

 private:
  BuiltinModel(torch::nn::Sequential net, const ModelConfig& config, const InputShape& input, int64_t classes);
  torch::nn::Sequential m_net;
  std::string m_description;
  ModelConfig m_config;
  InputShape m_input;
  int64_t m_classes;
  // Activation checkpointing: the recomputed segments' layers [begin, end),
  // then the layers from m_plainFrom on run as usual.
  std::vector<std::pair<size_t, size_t>> m_segments;
  size_t m_plainFrom = 0;
};

}  // namespace studio
