#include "optim/optimizer.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_sub.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>

namespace studio {

Optimizer::Optimizer(std::vector<torch::Tensor> params, const OptimizerConfig& config)
    : m_params(std::move(params)), m_config(config) {
  if (m_config.kind == "adam" || m_config.kind == "adamw") {
    for (const auto& p : m_params) {
      m_buf1.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      m_buf2.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      m_steps.push_back(torch::zeros({}, p.options().dtype(torch::kFloat32)));
    }
  } else if (m_config.momentum != 0) {
    // Zeroed buffers make every step the same kernel path: with dampening 0,
    // momentum * 0 + grad equals PyTorch's first-step copy of the grad, and a
    // skipped (overflowed) first step leaves no garbage behind.
    for (const auto& p : m_params) m_buf1.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  }
}

std::vector<torch::Tensor> Optimizer::grads() const {
  std::vector<torch::Tensor> g;
  for (const auto& p : m_params)
    if (p.grad().defined()) g.push_back(p.grad());
  return g;
}

void Optimizer::step(double lr, std::optional<double> momentum, const std::optional<torch::Tensor>& foundInf) {
  torch::NoGradGuard noGrad;
  // Parameters that got no gradient this step are left alone, as in PyTorch.
  std::vector<torch::Tensor> ps, gs, b1, b2, st;
  for (size_t i = 0; i < m_params.size(); ++i) {
    const auto& g = m_params[i].grad();
    if (!g.defined()) continue;
    ps.push_back(m_params[i]);
    gs.push_back(g);
    if (!m_buf1.empty()) b1.push_back(m_buf1[i]);
    if (!m_buf2.empty()) b2.push_back(m_buf2[i]);
    if (!m_steps.empty()) st.push_back(m_steps[i]);
  }
  if (ps.empty()) return;
  const auto& c = m_config;
  if (c.kind == "sgd") {
    const double mom = momentum.value_or(c.momentum);
    at::_fused_sgd_(ps, gs, b1, c.weight_decay, mom, lr, /*dampening=*/0.0, c.nesterov,
                    /*maximize=*/false, /*is_first_step=*/false, std::nullopt, foundInf);
    return;
  }
  const double beta1 = momentum.value_or(c.beta1);
  at::_foreach_add_(st, 1);
  if (c.kind == "adamw") {
    at::_fused_adamw_(ps, gs, b1, b2, {}, st, lr, beta1, c.beta2, c.weight_decay, c.eps,
                      /*amsgrad=*/false, /*maximize=*/false, std::nullopt, foundInf);
  } else {
    at::_fused_adam_(ps, gs, b1, b2, {}, st, lr, beta1, c.beta2, c.weight_decay, c.eps,
                     /*amsgrad=*/false, /*maximize=*/false, std::nullopt, foundInf);
  }
  if (foundInf) at::_foreach_sub_(st, *foundInf);
}

void Optimizer::zeroGrad(bool setToNone) {
  for (auto& p : m_params) {
    torch::Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (setToNone) {
      g.reset();
    } else {
      g.detach_();
      g.zero_();
    }
  }
}

void Optimizer::save(torch::serialize::OutputArchive& a) const {
  a.write("kind", c10::IValue(m_config.kind));
  for (size_t i = 0; i < m_buf1.size(); ++i) a.write("buf1." + std::to_string(i), m_buf1[i], true);
  for (size_t i = 0; i < m_buf2.size(); ++i) a.write("buf2." + std::to_string(i), m_buf2[i], true);
  for (size_t i = 0; i < m_steps.size(); ++i) a.write("step." + std::to_string(i), m_steps[i], true);
}

void Optimizer::load(torch::serialize::InputArchive& a) {
  c10::IValue kind;
  a.read("kind", kind);
  if (kind.toStringRef() != m_config.kind)
    throw std::runtime_error("checkpoint holds a " + kind.toStringRef() + " optimizer, settings say " +
                             m_config.kind);
  torch::NoGradGuard noGrad;
  auto readAll = [&](std::vector<torch::Tensor>& v, const std::string& prefix) {
    for (size_t i = 0; i < v.size(); ++i) {
      torch::Tensor t;
      a.read(prefix + std::to_string(i), t, true);
      v[i].copy_(t);
    }
  };
  readAll(m_buf1, "buf1.");
  readAll(m_buf2, "buf2.");
  readAll(m_steps, "step.");
}

}  // namespace studio
