#pragma once
// torchvision's GeneralizedRCNNTransform
// (torchvision/models/detection/transform.py): each image normalised by the
// ImageNet mean and deviation, resized so its shorter side is min_size (one
// of them, drawn, in training) unless its longer side would pass max_size
// (bilinear, as F.interpolate with a recomputed scale factor), or to a fixed
// size; then batched top-left into zeros whose height and width are
// multiples of 32. The targets' boxes follow; detections go back to each
// image's own pixels. Thread: engine thread.

#include <array>
#include <optional>
#include <vector>

#include "torch_pch.h"

namespace studio::detection {

struct ImageSize {
  int64_t height = 0, width = 0;
};

struct ImageBatch {
  torch::Tensor tensors;         // N x 3 x H x W, padded
  std::vector<ImageSize> sizes;  // each image's size after resizing, before padding
};

struct RcnnTransformOptions {
  std::vector<int64_t> minSizes{800};
  int64_t maxSize = 1333;
  std::array<double, 3> mean{0.485, 0.456, 0.406};
  std::array<double, 3> std{0.229, 0.224, 0.225};
  int64_t sizeDivisible = 32;
  std::optional<ImageSize> fixedSize;  // SSD's: every image to this size
};

class RcnnTransform {
 public:
  explicit RcnnTransform(RcnnTransformOptions options) : m_o(std::move(options)) {}
  // images: 3 x h x w, floating point in [0, 1]. boxes, when given, are
  // each image's boxes (K x 4), resized in place with their image. In
  // training the size is drawn from minSizes (torch.empty(1).uniform_ per
  // image, as torchvision's torch_choice).
  // masks, when given, are each image's instance masks (G x h x w, 0/1),
  // resized in place with it by nearest (torchvision's interpolate of
  // target["masks"], back to uint8).
  ImageBatch operator()(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor>* boxes, bool training,
                        std::vector<torch::Tensor>* masks = nullptr) const;
  // resize_boxes: boxes scaled from one image size to another (float32 ratios).
  static torch::Tensor resizeBoxes(const torch::Tensor& boxes, ImageSize from, ImageSize to);
  const RcnnTransformOptions& options() const { return m_o; }

 private:
  torch::Tensor resize(const torch::Tensor& image, int64_t minSize) const;
  RcnnTransformOptions m_o;
};

}  // namespace studio::detection
