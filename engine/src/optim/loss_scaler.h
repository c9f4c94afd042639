#pragma once
// Dynamic loss scaling for fp16, on LibTorch's own AMP ops with the rules of
// PyTorch's GradScaler: scale the loss, unscale the grads while checking for
// inf/NaN, skip the step that overflowed, back off, grow after
// `growth_interval` clean steps. Everything stays on the device: no sync.
// Disabled (fp32, bf16), it is a pass-through with scale 1.
// Thread: engine thread.

#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

class ArchiveDict;

class LossScaler {
 public:
  LossScaler(const LossScaleConfig& config, torch::Device device, bool enabled);

  bool enabled() const { return m_enabled; }
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Unscales the grads in place and sets foundInf(); call once per step.
  void unscale(const std::vector<torch::Tensor>& grads);
  // 1.0 when the last unscale met inf/NaN (float32 scalar on the device).
  const torch::Tensor& foundInf() const { return m_foundInf; }
  // Backs off or grows the scale according to foundInf().
  void update();
  const torch::Tensor& scaleTensor() const { return m_scale; }

  // The scale and its growth tracker as plain values, for checkpoints.
  c10::IValue state() const;
  void loadState(const ArchiveDict& state);

 private:
  LossScaleConfig m_config;
  bool m_enabled;
  torch::Tensor m_scale;     // float32 scalar
  torch::Tensor m_tracker;   // int32 scalar: clean steps since the last change
  torch::Tensor m_foundInf;  // float32 scalar
};

}  // namespace studio
