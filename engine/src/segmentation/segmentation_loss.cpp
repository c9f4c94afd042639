#include "segmentation/segmentation_loss.h"

#include <torch/nn/functional/loss.h>

namespace studio {

namespace {

torch::Tensor pixelCrossEntropy(const torch::Tensor& logits, const torch::Tensor& target, int64_t ignoreIndex) {
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits, target.to(torch::kInt64), F::CrossEntropyFuncOptions().ignore_index(ignoreIndex));
}

}  // namespace

torch::Tensor segmentationLoss(const SegmenterOutput& o, const torch::Tensor& target, int64_t ignoreIndex) {
  torch::Tensor loss = pixelCrossEntropy(o.out, target, ignoreIndex);
  if (o.aux.defined()) loss = loss + 0.5 * pixelCrossEntropy(o.aux, target, ignoreIndex);
  return loss;
}

torch::Tensor confusionCounts(const torch::Tensor& logits, const torch::Tensor& target, int64_t classes) {
  const torch::Tensor truth = target.to(torch::kInt64).flatten();
  const torch::Tensor predicted = logits.argmax(1).flatten();
  // Pixels left out go to one bin past the matrix; scatter_add sizes
  // nothing from the data, so it never waits for the device (bincount and
  // masked_select would).
  const int64_t cells = classes * classes;
  const torch::Tensor keep = (truth >= 0) & (truth < classes);
  const torch::Tensor index = torch::where(keep, truth * classes + predicted, torch::full_like(truth, cells));
  return torch::zeros({cells + 1}, truth.options())
      .scatter_add_(0, index, torch::ones_like(index))
      .slice(0, 0, cells)
      .reshape({classes, classes});
}

}  // namespace studio
