#pragma once
// RoIAlign on the CPU as torchvision's kernels compute it
// (torchvision/csrc/ops/cpu/roi_align_kernel.cpp): the forward pass with each
// bin's bilinear weights computed once, then every channel summed in the
// same order; the backward pass spreading each bin's gradient over its
// samples' four pixels in the serial kernel's order. roiAlign (box_ops.h)
// uses them for float and double on the CPU. Its tensor form (the GPU's,
// and bf16's) gathers every sample's four corners over all channels and
// keeps them for the backward pass: 2.4 GB at a training step of a Faster
// R-CNN at 128 px, batch 8, 128 proposals an image, against torchvision's
// whole step in 0.6 GB.
// Thread: engine thread (at::parallel_for over the rois, or the channels).

#include <cstdint>

#include "torch_pch.h"

namespace studio::detection {

// input: N x C x H x W float or double, on the CPU; rois: K x 5 in its
// dtype. Output K x C x ph x pw.
torch::Tensor roiAlignForwardCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                                 double spatialScale, int64_t samplingRatio, bool aligned);
// The same, differentiable: its gradient to the input is torchvision's
// backward kernel's (none to the rois).
torch::Tensor roiAlignCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                          double spatialScale, int64_t samplingRatio, bool aligned);

}  // namespace studio::detection
