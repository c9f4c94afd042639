#pragma once
// RoIAlign's forward pass on the CPU as torchvision's kernel computes it
// (torchvision/csrc/ops/cpu/roi_align_kernel.cpp: each bin's bilinear
// weights computed once, then every channel summed in the same order), for
// inference: roiAlign (box_ops.h) uses it when no gradient is wanted; its
// differentiable tensor form gathers every sample's four corners over all
// channels, which for a detector's 1,000 proposals in evaluation costs
// gigabytes of memory traffic.
// Thread: engine thread (at::parallel_for over the rois inside).

#include <cstdint>

#include "torch_pch.h"

namespace studio::detection {

// input: N x C x H x W float or double, on the CPU; rois: K x 5 in its
// dtype. Output K x C x ph x pw.
torch::Tensor roiAlignForwardCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                                 double spatialScale, int64_t samplingRatio, bool aligned);

}  // namespace studio::detection
