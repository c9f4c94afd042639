#include "models/module_model.h"

#include "nets/batch_norm.h"

namespace studio {

int64_t ModuleModel::parameterCount() {
  int64_t n = 0;
  for (const auto& p : m_module->parameters()) n += p.numel();
  return n;
}

std::vector<std::pair<std::string, torch::Tensor>> ModuleModel::namedParameters() {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m_module->named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> ModuleModel::namedState() {
  std::vector<std::pair<std::string, torch::Tensor>> out = namedParameters();
  for (const auto& b : m_module->named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

void ModuleModel::setTraining(bool on) {
  m_module->train(on);
  if (!on || !m_frozenNorms) return;
  for (const auto& m : m_module->named_modules("", /*include_self=*/false))
    if (std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m.value()) && m_frozenNorms(m.key())) m.value()->eval();
}

void ModuleModel::freezeNormStatistics(std::function<bool(const std::string& group)> frozen) {
  m_frozenNorms = nullptr;
  if (frozen) m_frozenNorms = [this, frozen](const std::string& module) { return frozen(layerGroup(module)); };
  setTraining(m_module->is_training());
}

int ModuleModel::synchroniseBatchNorm(ProcessGroup* group) {
  int n = 0;
  for (const auto& m : m_module->modules(/*include_self=*/false))
    if (auto bn = std::dynamic_pointer_cast<BatchNorm2dImpl>(m)) {
      bn->synchronise(group);
      ++n;
    }
  return n;
}

}  // namespace studio
