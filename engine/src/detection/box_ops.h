#pragma once
// The box operators torchvision's detectors need, as torchvision.ops
// computes them (LibTorch has none, and the torchvision wheel's _C.so needs
// Python's runtime): NMS, batched NMS and RoIAlign, on any device, written
// with ATen operators (RoIAlign's gradient is autograd's through them: the
// same weights torchvision's backward kernel scatters).
// Boxes are (x1, y1, x2, y2). Thread: any (pure functions of tensors).

#include <array>

#include "torch_pch.h"

namespace studio::detection {

// torchvision.ops.nms: the indices (int64) of the boxes kept, by decreasing
// score (ties in the order given); a box is dropped when its IoU with a kept
// box of higher score exceeds iouThreshold.
torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iouThreshold);

// torchvision.ops.batched_nms: NMS within each category (idxs), the kept
// indices by decreasing score. As torchvision: boxes offset per category
// into disjoint regions, or, above 4,000 numbers on the CPU (20,000 on a
// GPU), NMS category by category.
torch::Tensor batchedNms(const torch::Tensor& boxes, const torch::Tensor& scores, const torch::Tensor& idxs,
                         double iouThreshold);

// torchvision.ops.roi_align: input (N, C, H, W), rois (K, 5) of (batch
// index, x1, y1, x2, y2) in the input's image coordinates (times
// spatialScale: the feature map's); output (K, C, outH, outW), each bin the
// mean of samplingRatio x samplingRatio bilinear samples (0: as many as the
// bin is pixels wide and high, ceil), aligned: pixel centres at +0.5.
// On the CPU (float, double) torchvision's own kernels, forward and backward
// (roi_align_cpu.h); elsewhere (the GPU, bf16) roiAlignTensors.
torch::Tensor roiAlign(const torch::Tensor& input, const torch::Tensor& rois, std::array<int64_t, 2> outputSize,
                       double spatialScale, int64_t samplingRatio, bool aligned);
// The same from tensor operations, differentiable through autograd: every
// sample's four corners gathered over all channels (memory by samples).
torch::Tensor roiAlignTensors(const torch::Tensor& input, const torch::Tensor& rois, std::array<int64_t, 2> outputSize,
                              double spatialScale, int64_t samplingRatio, bool aligned);

}  // namespace studio::detection
