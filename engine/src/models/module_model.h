#pragma once
// A Model whose layers are one torch::nn::Module (the built-in models and
// torchvision's): its tensors by name, training mode with fine-tuning's kept
// BatchNorm statistics, and the BatchNorm synchronisation under torchrun, in
// one place for both.
// Thread: engine thread.

#include <functional>
#include <memory>

#include <torch/nn/module.h>

#include "models/model.h"

namespace studio {

class ModuleModel : public Model {
 public:
  std::vector<torch::Tensor> parameters() override { return m_module->parameters(); }
  int64_t parameterCount() override;
  std::vector<std::pair<std::string, torch::Tensor>> namedState() override;
  std::vector<std::pair<std::string, torch::Tensor>> namedParameters() override;
  std::vector<torch::Tensor> buffers() override { return m_module->buffers(); }
  // Training mode puts every layer in training mode but the BatchNorm layers
  // of the groups freezeNormStatistics names.
  void setTraining(bool on) override;
  void freezeNormStatistics(std::function<bool(const std::string& group)> frozen) override;
  void to(const torch::Device& device) override { m_module->to(device); }
  int synchroniseBatchNorm(ProcessGroup* group) override;

 protected:
  explicit ModuleModel(std::shared_ptr<torch::nn::Module> module) : m_module(std::move(module)) {}

 private:
  std::shared_ptr<torch::nn::Module> m_module;
  std::function<bool(const std::string&)> m_frozenNorms;  // by module name
};

}  // namespace studio
