#pragma once
// The parts of torchvision's SSD that are plain functions of tensors
// (torchvision/models/detection/ssd.py, anchor_utils.py, _utils.py), as
// ssdlite320_mobilenet_v3_large uses them: the default boxes
// (DefaultBoxGenerator), the matcher (SSDMatcher), the losses (smooth L1 of
// the foreground's offsets; cross-entropy with hard negative mining, three
// negatives per positive) and the post-processing (softmax, per class the
// scores over the threshold and the best topk, batched NMS). The model is
// detection/ssdlite.h.
// Thread: any (pure functions of tensors).

#include <array>
#include <vector>

#include "detection/roi_heads.h"  // Detections
#include "torch_pch.h"

namespace studio::detection {

struct SsdOptions {
  std::vector<std::vector<double>> aspectRatios;  // per feature map
  double minRatio = 0.15, maxRatio = 0.9;
  bool clip = true;
  double iou = 0.5;      // the matcher's threshold
  int64_t negToPos = 3;  // hard negatives per positive
  std::array<double, 4> coderWeights{10.0, 10.0, 5.0, 5.0};
  double scoreThresh = 0.01, nms = 0.45;
  int64_t detectionsPerImage = 200, topkCandidates = 400;
};

// ssdlite320_mobilenet_v3_large's: six maps of ratios [2, 3], scales 0.2 to 0.95.
SsdOptions ssdliteDefaults();
// The default boxes at each place of a map (num_anchors_per_location: 2 + 2 per ratio).
int64_t ssdAnchorsPerPlace(const SsdOptions& o);

// DefaultBoxGenerator: every map's boxes (x1, y1, x2, y2) in the padded
// image's pixels (imageH x imageW), the maps' grids (h, w) in order; options:
// the first map's. As torchvision, the centres are rounded to its dtype and
// the boxes are at least float32 (under autocast, bfloat16 maps give float32 boxes).
torch::Tensor defaultBoxes(const SsdOptions& o, const std::vector<std::array<int64_t, 2>>& grids, int64_t imageH,
                           int64_t imageW, const torch::TensorOptions& options);
// SSDMatcher: Matcher(iou, iou) and each box's best default box matched to it.
torch::Tensor ssdMatch(const torch::Tensor& quality, double iou);

// compute_loss: logits N x A x K, codes N x A x 4, anchors A x 4 (each
// image's alike), matched per image. {bbox_regression, classification}.
std::pair<torch::Tensor, torch::Tensor> ssdLosses(const SsdOptions& o, const torch::Tensor& logits,
                                                  const torch::Tensor& codes, const torch::Tensor& anchors,
                                                  const std::vector<torch::Tensor>& boxes,
                                                  const std::vector<torch::Tensor>& labels,
                                                  const std::vector<torch::Tensor>& matched);

// postprocess_detections: each image's boxes in its (resized) size.
std::vector<Detections> ssdDetections(const SsdOptions& o, const torch::Tensor& logits, const torch::Tensor& codes,
                                      const torch::Tensor& anchors, const std::vector<ImageSize>& sizes);

}  // namespace studio::detection
