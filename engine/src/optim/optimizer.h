#pragma once
// SGD (momentum, Nesterov), Adam and AdamW on PyTorch's fused kernels
// (`_fused_sgd_`, `_fused_adam_`, `_fused_adamw_`, on CUDA and the CPU), the
// same kernels Python's `fused=True` runs. Taking `found_inf` lets an fp16
// step that overflowed be skipped on the device, without a host sync.
// Thread: engine thread.

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

class ArchiveDict;

class Optimizer {
 public:
  Optimizer(std::vector<torch::Tensor> params, const OptimizerConfig& config);

  // One update with this learning rate; `momentum` replaces the SGD momentum
  // or Adam beta1 when a schedule cycles it. With `foundInf` (a float32
  // scalar on the device, 1 when the grads overflowed) the update is skipped
  // on the device and the step counters are left unchanged.
  void step(double lr, std::optional<double> momentum = std::nullopt,
            const std::optional<torch::Tensor>& foundInf = std::nullopt);
  // The same update with the learning rate (and the momentum, when the
  // schedule cycles it; undefined otherwise) in float32 scalars on the
  // device, so that it can be recorded in a CUDA graph and replayed with new
  // values. `foundInf` is required, and the gradients are spent (overwritten).
  // SGD with a cycling momentum runs as three passes of the fused kernel
  // (which takes the momentum as a number) that read it from the device.
  void step(const torch::Tensor& lr, const torch::Tensor& momentum, const torch::Tensor& foundInf);
  // Why step(Tensor, ...) cannot serve this optimizer ("" when it can).
  std::string notCapturable(bool momentumCycles) const;
  // Parameter groups' learning rates (fine-tuning's discriminative rates):
  // parameter i learns at lr * factors[i], as a PyTorch parameter group whose
  // lr (and the schedule's peaks and floors) are scaled by that factor.
  // Empty: one rate.
  void setLrFactors(std::vector<double> factors);
  const std::vector<double>& lrFactors() const { return m_factors; }
  void zeroGrad(bool setToNone);
  const std::vector<torch::Tensor>& params() const { return m_params; }
  std::vector<torch::Tensor> grads() const;

  // The optimizer's state as plain values (its kind and buffers), for
  // checkpoints; loadState throws CheckpointError naming `path` when the
  // state is of another optimizer or other parameters.
  c10::IValue state() const;
  void loadState(const ArchiveDict& state, const std::string& path);

 private:
  std::vector<torch::Tensor> m_params;
  OptimizerConfig m_config;
  std::vector<torch::Tensor> m_buf1;   // momentum buffers (sgd) or exp_avg (adam)
  std::vector<torch::Tensor> m_buf2;   // exp_avg_sq (adam)
  std::vector<torch::Tensor> m_steps;  // adam: float32 step counts on the device
  std::vector<double> m_factors;       // per parameter; empty: all 1

  struct Active;  // the parameters that have a gradient, with their state
  // Those whose learning-rate factor is `factor` (all when there are none).
  Active active(double factor = 1.0) const;
  // The distinct factors, in the parameters' order ({1} when there are none).
  std::vector<double> factorGroups() const;
  void stepGroup(Active& a, const torch::Tensor& lr, const torch::Tensor& momentum, const torch::Tensor& foundInf);
  template <typename Lr>
  void adamStep(Active& a, const Lr& lr, double beta1, const std::optional<torch::Tensor>& foundInf);
};

}  // namespace studio
