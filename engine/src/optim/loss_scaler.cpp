#include "optim/loss_scaler.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>

#include "tensors/tensor_archive.h"

namespace studio {

LossScaler::LossScaler(const LossScaleConfig& config, torch::Device device, bool enabled)
    : m_config(config), m_enabled(enabled) {
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  m_scale = torch::full({}, enabled ? config.init_scale : 1.0, f32);
  m_tracker = torch::zeros({}, f32.dtype(torch::kInt32));
  m_foundInf = torch::zeros({}, f32);
}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const {
  return m_enabled ? loss.to(torch::kFloat32) * m_scale : loss;
}

void LossScaler::unscale(const std::vector<torch::Tensor>& grads) {
  if (!m_enabled) return;
  torch::NoGradGuard noGrad;
  m_foundInf.zero_();
  // As GradScaler: the reciprocal in double, then float.
  torch::Tensor inv = m_scale.to(torch::kFloat64).reciprocal().to(torch::kFloat32);
  at::_amp_foreach_non_finite_check_and_unscale_(grads, m_foundInf, inv);
}

void LossScaler::update() {
  if (!m_enabled) return;
  torch::NoGradGuard noGrad;
  at::_amp_update_scale_(m_scale, m_tracker, m_foundInf, m_config.growth_factor, m_config.backoff_factor,
                         m_config.growth_interval);
}

c10::IValue LossScaler::state() const {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("scale", m_scale);
  d.insert("tracker", m_tracker);
  return d;
}

void LossScaler::loadState(const ArchiveDict& a) {
  torch::NoGradGuard noGrad;
  m_scale.copy_(a.tensor("scale"));
  m_tracker.copy_(a.tensor("tracker"));
}

}  // namespace studio
