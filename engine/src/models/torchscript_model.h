#pragma once
// A model a person wrote in Python and saved as TorchScript
// (torch.jit.script(model).save(path) or torch.jit.trace(...).save(path)),
// loaded with torch::jit::load and trained with every technique the
// built-ins get. Loading it runs its code: the front-ends say so and the
// log records the file's SHA-256.
// Thread: engine thread (or the one thread that made it).

#include <set>

#include <torch/csrc/jit/api/module.h>

#include "models/model.h"

namespace studio {

class TorchScriptModel : public Model {
 public:
  // Throws ModelError naming model.path: missing, or not TorchScript.
  explicit TorchScriptModel(std::string path);
  torch::Tensor forward(const torch::Tensor& x) override;
  std::vector<torch::Tensor> parameters() override;
  std::vector<std::pair<std::string, torch::Tensor>> namedParameters() override;
  int64_t parameterCount() override { return countParameters(m_module); }
  std::vector<std::pair<std::string, torch::Tensor>> namedState() override;
  std::vector<torch::Tensor> buffers() override;
  static int64_t countParameters(const torch::jit::Module& m);
  void setTraining(bool on) override { m_module.train(on); }
  void to(const torch::Device& device) override { m_module.to(device); }
  std::vector<LayerSummary> layers(const torch::Tensor& sample) override;
  std::string description() const override;
  // model.ts: the module with the trained weights, on the CPU.
  std::vector<std::string> exportTo(const std::string& dir) override;
  std::string fileSha256() const override { return m_sha256; }

 private:
  std::string m_path, m_sha256;
  torch::jit::Module m_module;
  std::set<std::string> m_trainable;  // the parameters that required grad when loaded
};

}  // namespace studio
