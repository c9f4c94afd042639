#pragma once
// A semantic segmentation's loss and its evaluation's counts on the
// training device, as torchvision's references/segmentation
// (train.py's criterion and utils.py's ConfusionMatrix.update):
//  - the loss: cross-entropy of each pixel's logits, the pixels at the
//    ignore index left out and the rest averaged, plus 0.5 x the same of the
//    auxiliary head's logits when there are any;
//  - the counts: the confusion matrix [classes, classes] (rows the truth) of
//    the arg-max predictions, truth outside 0..classes-1 left out, by one
//    bincount; its figures are studio/segmentation_figures.h's.
// Thread: engine thread.

#include <cstdint>

#include <torch/types.h>

#include "segmentation/segmenters.h"

namespace studio {

// target: [N, H, W] integer (uint8 or int64) at the logits' size.
torch::Tensor segmentationLoss(const SegmenterOutput& logits, const torch::Tensor& target, int64_t ignoreIndex);

// int64 [classes, classes] on the logits' device; no host sync.
torch::Tensor confusionCounts(const torch::Tensor& logits, const torch::Tensor& target, int64_t classes);

}  // namespace studio
