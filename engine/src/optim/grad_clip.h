#pragma once
// Global L2 gradient norm and clipping without a host sync, as Python's
// clip_grad_norm_ with foreach: the grads are multiplied by
// min(1, max_norm / (norm + 1e-6)) on the device, never branched on.
// Thread: engine thread.

#include <vector>

#include <torch/types.h>

namespace studio {

// Returns the norm before clipping (a float32 scalar on the device); clips
// when maxNorm > 0.
torch::Tensor clipGradNorm(const std::vector<torch::Tensor>& grads, double maxNorm);

}  // namespace studio
