#include "detection/retina_losses.h"

#include <torch/nn/functional/loss.h>

namespace studio::detection {

torch::Tensor sigmoidFocalLossSum(const torch::Tensor& logits, const torch::Tensor& targets, double alpha,
                                  double gamma) {
  namespace F = torch::nn::functional;
  const torch::Tensor p = torch::sigmoid(logits);
  const torch::Tensor ce = F::binary_cross_entropy_with_logits(
      logits, targets, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
  const torch::Tensor pT = p * targets + (1 - p) * (1 - targets);
  torch::Tensor loss = ce * (1 - pT).pow(gamma);
  if (alpha >= 0) {
    const torch::Tensor alphaT = alpha * targets + (1 - alpha) * (1 - targets);
    loss = alphaT * loss;
  }
  return loss.sum();
}

torch::Tensor generalizedBoxIouLossSum(const torch::Tensor& boxes1, const torch::Tensor& boxes2, double eps) {
  const auto a = boxes1.unbind(-1), b = boxes2.unbind(-1);
  const torch::Tensor &x1 = a[0], &y1 = a[1], &x2 = a[2], &y2 = a[3];
  const torch::Tensor &x1g = b[0], &y1g = b[1], &x2g = b[2], &y2g = b[3];
  // _loss_inter_union: the intersection where the boxes overlap, set through a mask as torchvision sets it.
  const torch::Tensor xkis1 = torch::max(x1, x1g), ykis1 = torch::max(y1, y1g);
  const torch::Tensor xkis2 = torch::min(x2, x2g), ykis2 = torch::min(y2, y2g);
  torch::Tensor intersection = torch::zeros_like(x1);
  const torch::Tensor mask = (ykis2 > ykis1) & (xkis2 > xkis1);
  // Python's intsctk[mask] = ... converts the value to intsctk's type: under
  // bf16 autocast the boxes are bf16 and their matches float32.
  intersection.index_put_({mask},
                          ((xkis2.index({mask}) - xkis1.index({mask})) * (ykis2.index({mask}) - ykis1.index({mask})))
                              .to(intersection.scalar_type()));
  const torch::Tensor unionArea = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intersection;
  const torch::Tensor iou = intersection / (unionArea + eps);
  // The smallest enclosing box.
  const torch::Tensor xc1 = torch::min(x1, x1g), yc1 = torch::min(y1, y1g);
  const torch::Tensor xc2 = torch::max(x2, x2g), yc2 = torch::max(y2, y2g);
  const torch::Tensor areaC = (xc2 - xc1) * (yc2 - yc1);
  const torch::Tensor giou = iou - ((areaC - unionArea) / (areaC + eps));
  return (1 - giou).sum();
}

}  // namespace studio::detection
