#pragma once
// Detection's augmentations, with torchvision.transforms.v2's meaning,
// defaults and draws: the boxes follow the pixels.
//   RandomPhotometricDistort  brightness, contrast (before or after
//                             saturation and hue), saturation, hue, each with
//                             p 0.5, then a channel permutation with p 0.5
//   RandomZoomOut             the image on a canvas 1 to 4 times its sides (p 0.5)
//   RandomIoUCrop             a crop whose IoU with a box whose centre it
//                             holds reaches a drawn minimum (SSD's sampler);
//                             the boxes whose centres it leaves out are zeroed
//   RandomHorizontalFlip      p 0.5
//   RandomShortestSize        the shorter side to one of the sizes drawn,
//                             the longer at most max_size (bilinear, antialias)
//   SanitizeBoundingBoxes     the boxes under 1 px wide or high, or outside
//                             the image, dropped with their labels
// in the order of torchvision's references/detection (SSD's pipeline:
// photometric, zoom out, IoU crop, flip; then the size, then the sanitising).
// Each transform's draws are v2's make_params' calls on the generator given,
// in the same order, so the same seed gives the same result; the
// fixed-parameter operations are exposed for the tests.
// Images are float C x H x W in [0, 1]; boxes K x 4 (x1, y1, x2, y2) in pixels.
// Thread: any.

#include <array>
#include <optional>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio::detection {

struct BoxedImage {
  torch::Tensor image;   // C x H x W, float in [0, 1]
  torch::Tensor boxes;   // K x 4, float
  torch::Tensor labels;  // K, int64
  // task.kind instance_segmentation: K x H x W, uint8 0/1, a mask per box,
  // moved as v2 moves a tv_tensors.Mask (padded with 0, cropped, flipped,
  // resized by nearest, dropped with its box); undefined without masks.
  torch::Tensor masks{};
};

struct BoxAugment {
  bool photometric = false;
  bool zoomOut = false;
  double zoomOutMax = 4.0;              // side_range (1, zoomOutMax)
  std::array<double, 3> fill{0, 0, 0};  // the canvas's colour
  bool iouCrop = false;
  bool horizontalFlip = false;
  std::vector<int64_t> shortestSizes;  // RandomShortestSize's min_size (empty: off)
  int64_t maxSize = 0;                 // its max_size (0: none)
  bool any() const { return photometric || zoomOut || iouCrop || horizontalFlip || !shortestSizes.empty(); }
};

// The box augmentations data.augment_flip, _photometric, _zoom_out and
// _iou_crop turn on (task.kind detection's training and its preview).
BoxAugment boxAugmentOf(const DataConfig& data);

// The whole pipeline, drawing from gen; always sanitises the boxes.
BoxedImage augmentBoxed(BoxedImage x, const BoxAugment& a, at::Generator& gen);

// The fixed-parameter operations (v2.functional's on an image and its boxes).
BoxedImage horizontalFlip(const BoxedImage& x);
// pad(padding = [left, top, right, bottom], fill): the boxes moved and clamped.
BoxedImage zoomOut(const BoxedImage& x, const std::array<int64_t, 4>& padding, const std::array<double, 3>& fill);
// crop(top, left, height, width): the boxes moved and clamped, and those
// outside `within` (a bool per box) zeroed, as RandomIoUCrop's transform.
BoxedImage iouCrop(const BoxedImage& x, int64_t top, int64_t left, int64_t height, int64_t width,
                   const torch::Tensor& within);
// v2's resize of a tv_tensors.Mask: K x H x W masks to K x height x width by
// nearest (K may be 0), in their dtype.
torch::Tensor resizeMasks(const torch::Tensor& masks, int64_t height, int64_t width);
// resize to height x width (bilinear, antialias), the boxes scaled (float32 ratios); the masks by resizeMasks.
BoxedImage resizeBoxed(const BoxedImage& x, int64_t height, int64_t width);
struct PhotometricDraw {
  std::optional<double> brightness, contrast, saturation, hue;
  bool contrastBefore = true;
  std::optional<std::array<int64_t, 3>> permutation;
};
BoxedImage photometricDistort(const BoxedImage& x, const PhotometricDraw& d);
// RandomPhotometricDistort.make_params's draws (p 0.5 each), from gen.
PhotometricDraw drawPhotometric(at::Generator& gen);
// SanitizeBoundingBoxes(min_size 1, min_area 1).
BoxedImage sanitizeBoxes(const BoxedImage& x, double minSize = 1.0, double minArea = 1.0);

}  // namespace studio::detection
