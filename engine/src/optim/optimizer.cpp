#include "optim/optimizer.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_sub.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>
#include <ATen/ops/rsub.h>

#include <algorithm>

#include "studio/errors.h"
#include "tensors/tensor_archive.h"

namespace studio {

Optimizer::Optimizer(std::vector<torch::Tensor> params, const OptimizerConfig& config)
    : m_params(std::move(params)), m_config(config) {
  if (m_config.kind == OptimizerKind::adam || m_config.kind == OptimizerKind::adamw) {
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

struct Optimizer::Active {
  std::vector<torch::Tensor> ps, gs, b1, b2, st;
};

void Optimizer::setLrFactors(std::vector<double> factors) {
  if (!factors.empty() && factors.size() != m_params.size())
    throw std::invalid_argument("setLrFactors: " + std::to_string(factors.size()) + " factors for " +
                                std::to_string(m_params.size()) + " parameters");
  if (std::all_of(factors.begin(), factors.end(), [](double f) { return f == 1.0; })) factors.clear();
  m_factors = std::move(factors);
}

std::vector<double> Optimizer::factorGroups() const {
  std::vector<double> out;
  for (double f : m_factors)
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  if (out.empty()) out.push_back(1.0);
  return out;
}

// Parameters that got no gradient this step are left alone, as in PyTorch.
Optimizer::Active Optimizer::active(double factor) const {
  Active a;
  for (size_t i = 0; i < m_params.size(); ++i) {
    const auto& g = m_params[i].grad();
    if (!g.defined()) continue;
    if (!m_factors.empty() && m_factors[i] != factor) continue;
    a.ps.push_back(m_params[i]);
    a.gs.push_back(g);
    if (!m_buf1.empty()) a.b1.push_back(m_buf1[i]);
    if (!m_buf2.empty()) a.b2.push_back(m_buf2[i]);
    if (!m_steps.empty()) a.st.push_back(m_steps[i]);
  }
  return a;
}

// Adam or AdamW on the fused kernel, with the learning rate as a number or a
// device scalar (both overloads of the kernel exist).
template <typename Lr>
void Optimizer::adamStep(Active& a, const Lr& lr, double beta1, const std::optional<torch::Tensor>& foundInf) {
  const auto& c = m_config;
  at::_foreach_add_(a.st, 1);
  if (c.kind == OptimizerKind::adamw) {
    at::_fused_adamw_(a.ps, a.gs, a.b1, a.b2, {}, a.st, lr, beta1, c.beta2, c.weight_decay, c.eps,
                      /*amsgrad=*/false, /*maximize=*/false, std::nullopt, foundInf);
  } else {
    at::_fused_adam_(a.ps, a.gs, a.b1, a.b2, {}, a.st, lr, beta1, c.beta2, c.weight_decay, c.eps,
                     /*amsgrad=*/false, /*maximize=*/false, std::nullopt, foundInf);
  }
  // As Python's adamw: the increment is undone where the step was skipped.
  if (foundInf) at::_foreach_sub_(a.st, std::vector<torch::Tensor>(a.st.size(), *foundInf));
}

void Optimizer::step(double lr, std::optional<double> momentum, const std::optional<torch::Tensor>& foundInf) {
  torch::NoGradGuard noGrad;
  for (double factor : factorGroups()) {
    Active a = active(factor);
    if (a.ps.empty()) continue;
    const auto& c = m_config;
    if (c.kind == OptimizerKind::sgd) {
      const double mom = momentum.value_or(c.momentum);
      at::_fused_sgd_(a.ps, a.gs, a.b1, c.weight_decay, mom, lr * factor, /*dampening=*/0.0, c.nesterov,
                      /*maximize=*/false, /*is_first_step=*/false, std::nullopt, foundInf);
      continue;
    }
    adamStep(a, lr * factor, momentum.value_or(c.beta1), foundInf);
  }
}

std::string Optimizer::notCapturable(bool momentumCycles) const {
  if (momentumCycles && m_config.kind != OptimizerKind::sgd)
    return "the schedule cycles " + m_config.kind +
           "'s beta1, which PyTorch's fused Adam kernels take as a number, not a device tensor";
  return "";
}

void Optimizer::step(const torch::Tensor& lr, const torch::Tensor& momentum, const torch::Tensor& foundInf) {
  torch::NoGradGuard noGrad;
  for (double factor : factorGroups()) {
    Active a = active(factor);
    if (!a.ps.empty()) stepGroup(a, factor == 1.0 ? lr : lr * factor, momentum, foundInf);
  }
}

void Optimizer::stepGroup(Active& a, const torch::Tensor& lr, const torch::Tensor& momentum,
                          const torch::Tensor& foundInf) {
  const auto& c = m_config;
  if (c.kind != OptimizerKind::sgd) {
    adamStep(a, lr, c.beta1, foundInf);
    return;
  }
  if (!momentum.defined() || c.momentum == 0) {
    at::_fused_sgd_(a.ps, a.gs, a.b1, c.weight_decay, c.momentum, lr, 0.0, c.nesterov, false, false, std::nullopt,
                    foundInf);
    return;
  }
  // SGD with the momentum m from a device scalar, as three passes of the
  // fused kernel (a pass per parameter list, not per tensor), each skipped
  // on the device when foundInf is 1. The kernel computes, per element,
  //   g = grad / grad_scale (written back to grad); g = -g if maximize;
  //   g += weight_decay * param; param -= lr * g
  // so, with L = 1 - m:
  //   1. param := buf, grad := g, scale L, decay 1, lr L, maximize:
  //      buf -= L * (-g / L + buf), i.e. buf = m * buf + g; and g := g / L.
  //   2. (Nesterov) param := g / L, grad := buf, decay 1, lr m, maximize:
  //      g/L -= m * (-buf + g/L), i.e. (1 - m) * g/L + m * buf = g + m * buf.
  //   3. param -= lr * (that, or buf).
  // Weight decay goes into the gradients first, as the fused kernel adds it.
  if (c.weight_decay != 0) at::_foreach_add_(a.gs, a.ps, c.weight_decay);
  const torch::Tensor oneMinusM = at::rsub(momentum, 1);
  at::_fused_sgd_(a.b1, a.gs, {}, /*weight_decay=*/1.0, /*momentum=*/0.0, oneMinusM, 0.0, false,
                  /*maximize=*/true, false, oneMinusM, foundInf);
  if (c.nesterov) {
    at::_fused_sgd_(a.gs, a.b1, {}, 1.0, 0.0, momentum, 0.0, false, /*maximize=*/true, false, std::nullopt, foundInf);
    at::_fused_sgd_(a.ps, a.gs, {}, 0.0, 0.0, lr, 0.0, false, false, false, std::nullopt, foundInf);
  } else {
    at::_fused_sgd_(a.ps, a.b1, {}, 0.0, 0.0, lr, 0.0, false, false, false, std::nullopt, foundInf);
  }
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

namespace {

c10::IValue tensorList(const std::vector<torch::Tensor>& v) {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const auto& t : v) list.push_back(t);
  return list;
}

}  // namespace

c10::IValue Optimizer::state() const {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("kind", m_config.kind.name());
  d.insert("buf1", tensorList(m_buf1));
  d.insert("buf2", tensorList(m_buf2));
  d.insert("step", tensorList(m_steps));
  return d;
}

void Optimizer::loadState(const ArchiveDict& a, const std::string& path) {
  const std::string kind = a.text("kind");
  if (kind != m_config.kind.name())
    throw CheckpointError("checkpoint " + path + " holds a " + kind + " optimizer, the settings say " + m_config.kind);
  torch::NoGradGuard noGrad;
  auto readAll = [&](std::vector<torch::Tensor>& into, const char* key) {
    const std::vector<torch::Tensor> from = a.tensors(key);
    if (from.size() != into.size())
      throw CheckpointError("checkpoint " + path + " holds optimizer state for " + std::to_string(from.size()) +
                            " tensors, the model has " + std::to_string(into.size()));
    for (size_t i = 0; i < into.size(); ++i) {
      if (!from[i].sizes().equals(into[i].sizes()))
        throw CheckpointError("checkpoint " + path + " holds optimizer state of another shape than the model's");
      into[i].copy_(from[i]);
    }
  };
  readAll(m_buf1, "buf1");
  readAll(m_buf2, "buf2");
  readAll(m_steps, "step");
}

}  // namespace studio
