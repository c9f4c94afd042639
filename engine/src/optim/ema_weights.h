#pragma once
// train.ema: an exponential moving average of a model's parameters and
// buffers, as torch.optim.swa_utils.AveragedModel(model,
// multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True) keeps it: the
// first update copies; then floating tensors take one _foreach_lerp_ towards
// the weights by 1 - decay, and whole-number buffers (BatchNorm's
// num_batches_tracked) become avg * decay + weights * (1 - decay), truncated.
// All on the device, no host sync.
// Thread: engine thread.

#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "models/model.h"

namespace studio {

class EmaWeights {
 public:
  explicit EmaWeights(double decay) : m_decay(decay) {}
  void update(Model& model);
  bool started() const { return !m_average.empty(); }
  void reset() {
    m_average.clear();
    m_updates = 0;
  }
  int64_t updates() const { return m_updates; }
  // name -> tensor, in the model's order (for checkpoints).
  std::vector<std::pair<std::string, torch::Tensor>> named(Model& model) const;
  // Restores a checkpoint's average (name -> tensor, the model's shapes).
  void load(Model& model, const std::vector<std::pair<std::string, torch::Tensor>>& stored, int64_t updates);

  // While alive, the model holds the average; its own weights come back after.
  class Swap {
   public:
    Swap(EmaWeights& ema, Model& model);
    ~Swap();
    Swap(const Swap&) = delete;
    Swap& operator=(const Swap&) = delete;

   private:
    std::vector<torch::Tensor> m_own, m_saved;
  };

 private:
  double m_decay;
  int64_t m_updates = 0;
  std::vector<torch::Tensor> m_average;  // in model.namedState() order
};

}  // namespace studio
