#pragma once
// The losses torchvision's single-stage detectors train with
// (torchvision/ops/focal_loss.py, giou_loss.py, _utils.py), with the same
// operations in the same order, so that the same inputs give the same values
// and gradients: RetinaNet's classification loss (sigmoid focal loss, Lin et
// al., "Focal Loss for Dense Object Detection", ICCV 2017) and
// retinanet_resnet50_fpn_v2's box loss (generalized IoU, Rezatofighi et al.,
// CVPR 2019). test_detectors.py compares RetinaNet's losses and gradients
// with torchvision's.
// Thread: any (pure functions of tensors).

#include "torch_pch.h"

namespace studio::detection {

// sigmoid_focal_loss(inputs, targets, alpha, gamma, reduction="sum").
torch::Tensor sigmoidFocalLossSum(const torch::Tensor& logits, const torch::Tensor& targets, double alpha = 0.25,
                                  double gamma = 2.0);

// generalized_box_iou_loss(boxes1, boxes2, reduction="sum", eps): boxes
// (x1, y1, x2, y2), row by row.
torch::Tensor generalizedBoxIouLossSum(const torch::Tensor& boxes1, const torch::Tensor& boxes2, double eps = 1e-7);

}  // namespace studio::detection
