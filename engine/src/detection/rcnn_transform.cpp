#include "detection/rcnn_transform.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace studio::detection {

torch::Tensor RcnnTransform::resize(const torch::Tensor& image, int64_t minSize) const {
  const int64_t h = image.size(-2), w = image.size(-1);
  std::vector<int64_t> size;
  if (m_o.fixedSize) {
    size = {m_o.fixedSize->height, m_o.fixedSize->width};
  } else {
    // min(min_size / shorter, max_size / longer) in double, then
    // F.interpolate's recomputed output size: floor(side * scale).
    const double scale = std::min(static_cast<double>(minSize) / static_cast<double>(std::min(h, w)),
                                  static_cast<double>(m_o.maxSize) / static_cast<double>(std::max(h, w)));
    size = {static_cast<int64_t>(std::floor(static_cast<double>(h) * scale)),
            static_cast<int64_t>(std::floor(static_cast<double>(w) * scale))};
  }
  return at::upsample_bilinear2d(image.unsqueeze(0), size, /*align_corners=*/false).squeeze(0);
}

torch::Tensor RcnnTransform::resizeBoxes(const torch::Tensor& boxes, ImageSize from, ImageSize to) {
  const auto f = torch::TensorOptions().dtype(torch::kFloat).device(boxes.device());
  const torch::Tensor rh =
      torch::tensor(static_cast<float>(to.height), f) / torch::tensor(static_cast<float>(from.height), f);
  const torch::Tensor rw =
      torch::tensor(static_cast<float>(to.width), f) / torch::tensor(static_cast<float>(from.width), f);
  const std::vector<torch::Tensor> c = boxes.unbind(1);
  return torch::stack({c[0] * rw, c[1] * rh, c[2] * rw, c[3] * rh}, 1);
}

ImageBatch RcnnTransform::operator()(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor>* boxes,
                                     bool training, std::vector<torch::Tensor>* masks) const {
  if (images.empty()) throw std::invalid_argument("detection: no images");
  ImageBatch batch;
  std::vector<torch::Tensor> resized;
  for (size_t i = 0; i < images.size(); ++i) {
    const torch::Tensor& image = images[i];
    if (image.dim() != 3) throw std::invalid_argument("detection: an image must be 3 x H x W");
    if (!image.is_floating_point()) throw std::invalid_argument("detection: images must be floating point in [0, 1]");
    const auto opts = image.options();
    const torch::Tensor mean = torch::tensor({m_o.mean[0], m_o.mean[1], m_o.mean[2]}, opts);
    const torch::Tensor std = torch::tensor({m_o.std[0], m_o.std[1], m_o.std[2]}, opts);
    torch::Tensor x = (image - mean.view({-1, 1, 1})) / std.view({-1, 1, 1});
    int64_t minSize = m_o.minSizes.back();
    if (training) {
      const double u = torch::empty({1}).uniform_(0.0, static_cast<double>(m_o.minSizes.size())).item<double>();
      minSize = m_o.minSizes[static_cast<size_t>(u)];
    }
    const ImageSize before{x.size(1), x.size(2)};
    x = resize(x, minSize);
    const ImageSize after{x.size(1), x.size(2)};
    if (boxes && i < boxes->size() && (*boxes)[i].defined()) (*boxes)[i] = resizeBoxes((*boxes)[i], before, after);
    if (masks && i < masks->size() && (*masks)[i].defined()) {
      torch::Tensor& m = (*masks)[i];
      m = m.size(0) == 0 ? torch::zeros({0, after.height, after.width}, m.options().dtype(torch::kUInt8))
                         : at::upsample_nearest2d(m.unsqueeze(1).to(torch::kFloat), {after.height, after.width})
                               .select(1, 0)
                               .to(torch::kUInt8);
    }
    batch.sizes.push_back(after);
    resized.push_back(x);
  }
  int64_t channels = 0, height = 0, width = 0;
  for (const auto& x : resized) {
    channels = std::max(channels, x.size(0));
    height = std::max(height, x.size(1));
    width = std::max(width, x.size(2));
  }
  const auto stride = static_cast<double>(m_o.sizeDivisible);
  height = static_cast<int64_t>(std::ceil(static_cast<double>(height) / stride) * stride);
  width = static_cast<int64_t>(std::ceil(static_cast<double>(width) / stride) * stride);
  batch.tensors = torch::zeros({static_cast<int64_t>(resized.size()), channels, height, width}, resized[0].options());
  for (size_t i = 0; i < resized.size(); ++i) {
    const torch::Tensor& x = resized[i];
    batch.tensors[static_cast<int64_t>(i)]
        .slice(0, 0, x.size(0))
        .slice(1, 0, x.size(1))
        .slice(2, 0, x.size(2))
        .copy_(x);
  }
  return batch;
}

}  // namespace studio::detection
