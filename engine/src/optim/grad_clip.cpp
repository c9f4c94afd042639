#include "optim/grad_clip.h"

#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/linalg_vector_norm.h>

namespace studio {

torch::Tensor clipGradNorm(const std::vector<torch::Tensor>& grads, double maxNorm) {
  torch::NoGradGuard noGrad;
  if (grads.empty()) return torch::zeros({});
  std::vector<torch::Tensor> norms = at::_foreach_norm(grads, 2);
  torch::Tensor total = at::linalg_vector_norm(torch::stack(norms), 2).to(torch::kFloat32);
  if (maxNorm > 0) {
    torch::Tensor coef = torch::clamp_max(maxNorm / (total + 1e-6), 1.0);
    at::_foreach_mul_(grads, coef);
  }
  return total;
}

}  // namespace studio
