#include "optim/ema_weights.h"

#include <ATen/ops/_foreach_lerp.h>
#include <c10/core/GradMode.h>

#include "studio/errors.h"

namespace studio {

namespace {
std::vector<torch::Tensor> tensorsOf(Model& model) {
  std::vector<torch::Tensor> out;
  for (auto& [name, t] : model.namedState()) out.push_back(t);
  return out;
}
}  // namespace

void EmaWeights::update(Model& model) {
  torch::NoGradGuard noGrad;
  const std::vector<torch::Tensor> own = tensorsOf(model);
  if (m_average.empty()) {
    for (const auto& t : own) m_average.push_back(t.detach().clone());
  } else {
    std::vector<torch::Tensor> avgFloat, ownFloat;
    for (size_t i = 0; i < own.size(); ++i) {
      if (m_average[i].is_floating_point()) {
        avgFloat.push_back(m_average[i]);
        ownFloat.push_back(own[i]);
      } else {
        m_average[i].copy_(m_average[i] * m_decay + own[i] * (1.0 - m_decay));
      }
    }
    if (!avgFloat.empty()) at::_foreach_lerp_(avgFloat, ownFloat, 1.0 - m_decay);
  }
  ++m_updates;
}

std::vector<std::pair<std::string, torch::Tensor>> EmaWeights::named(Model& model) const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  const auto own = model.namedState();
  for (size_t i = 0; i < own.size() && i < m_average.size(); ++i) out.emplace_back(own[i].first, m_average[i]);
  return out;
}

void EmaWeights::load(Model& model, const std::vector<std::pair<std::string, torch::Tensor>>& stored, int64_t updates) {
  torch::NoGradGuard noGrad;
  m_average.clear();
  for (auto& [name, t] : model.namedState()) {
    const torch::Tensor* found = nullptr;
    for (const auto& [storedName, s] : stored)
      if (storedName == name) found = &s;
    if (!found || !found->sizes().equals(t.sizes()))
      throw CheckpointError("the checkpoint's weight average (ema) does not match the model at " + name);
    torch::Tensor a = torch::empty_like(t);
    a.copy_(*found);
    m_average.push_back(a);
  }
  m_updates = updates;
}

EmaWeights::Swap::Swap(EmaWeights& ema, Model& model) : m_own(tensorsOf(model)) {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < m_own.size(); ++i) {
    m_saved.push_back(m_own[i].detach().clone());
    m_own[i].detach().copy_(ema.m_average[i]);
  }
}

EmaWeights::Swap::~Swap() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < m_own.size(); ++i) m_own[i].detach().copy_(m_saved[i]);
}

}  // namespace studio
