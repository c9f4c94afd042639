#include "data/box_augment.h"

#include <algorithm>
#include <cmath>

#include "data/augment.h"
#include "detection/box_coder.h"

namespace studio::detection {

namespace {

// (left, top, left, top): what pad adds to boxes and crop takes from them.
torch::Tensor cornerShift(int64_t left, int64_t top, const torch::TensorOptions& options) {
  const auto l = static_cast<double>(left), t = static_cast<double>(top);
  return torch::tensor({l, t, l, t}, options);
}

double uniform(at::Generator& gen, double lo, double hi) {
  return torch::empty({1}).uniform_(lo, hi, gen).item<double>();  // ColorJitter._generate_value
}

bool applies(at::Generator& gen, double p) { return torch::rand({1}, gen).item<double>() < p; }

}  // namespace

BoxedImage horizontalFlip(const BoxedImage& x) {
  BoxedImage y = x;
  y.image = x.image.flip(-1);
  if (x.masks.defined()) y.masks = x.masks.flip(-1);
  if (x.boxes.numel()) {
    const double w = static_cast<double>(x.image.size(-1));
    y.boxes = x.boxes.clone();
    y.boxes.select(1, 0).copy_(-(x.boxes.select(1, 2) - w));
    y.boxes.select(1, 2).copy_(-(x.boxes.select(1, 0) - w));
  }
  return y;
}

BoxedImage zoomOut(const BoxedImage& x, const std::array<int64_t, 4>& padding, const std::array<double, 3>& fill) {
  const auto [left, top, right, bottom] = padding;
  const int64_t c = x.image.size(0), h = x.image.size(1), w = x.image.size(2);
  BoxedImage y = x;
  const int64_t height = h + top + bottom, width = w + left + right;
  torch::Tensor canvas = torch::empty({c, height, width}, x.image.options());
  for (int64_t k = 0; k < c; ++k) canvas[k].fill_(fill[static_cast<size_t>(std::min<int64_t>(k, 2))]);
  canvas.slice(1, top, top + h).slice(2, left, left + w).copy_(x.image);
  y.image = canvas;
  if (x.masks.defined()) y.masks = torch::constant_pad_nd(x.masks, {left, right, top, bottom}, 0);
  if (x.boxes.numel())  // clamp_bounding_boxes after the shift
    y.boxes = clipBoxesToImage(x.boxes + cornerShift(left, top, x.boxes.options()), height, width);
  return y;
}

BoxedImage iouCrop(const BoxedImage& x, int64_t top, int64_t left, int64_t height, int64_t width,
                   const torch::Tensor& within) {
  BoxedImage y = x;
  y.image = x.image.slice(1, top, top + height).slice(2, left, left + width);
  if (x.masks.defined()) y.masks = x.masks.slice(1, top, top + height).slice(2, left, left + width);
  if (x.boxes.numel()) {
    y.boxes = clipBoxesToImage(x.boxes - cornerShift(left, top, x.boxes.options()), height, width);
    y.boxes.index_put_({within.logical_not()}, 0);
  }
  return y;
}

torch::Tensor resizeMasks(const torch::Tensor& masks, int64_t height, int64_t width) {
  if (masks.size(0) == 0) return torch::empty({0, height, width}, masks.options());
  return at::upsample_nearest2d(masks.unsqueeze(0).to(torch::kFloat), {height, width})
      .squeeze(0)
      .to(masks.scalar_type());
}

BoxedImage resizeBoxed(const BoxedImage& x, int64_t height, int64_t width) {
  const int64_t h = x.image.size(1), w = x.image.size(2);
  if (h == height && w == width) return x;
  BoxedImage y = x;
  y.image = resizedCrop(x.image, 0, 0, h, w, height, width);
  if (x.masks.defined()) y.masks = resizeMasks(x.masks, height, width);
  if (x.boxes.numel()) {
    const double rw = static_cast<double>(width) / static_cast<double>(w);
    const double rh = static_cast<double>(height) / static_cast<double>(h);
    y.boxes = x.boxes.mul(torch::tensor({rw, rh, rw, rh}, torch::kFloat)).to(x.boxes.scalar_type());
  }
  return y;
}

BoxedImage photometricDistort(const BoxedImage& x, const PhotometricDraw& d) {
  BoxedImage y = x;
  torch::Tensor img = x.image;
  if (d.brightness) img = adjustBrightness(img, *d.brightness);
  if (d.contrast && d.contrastBefore) img = adjustContrast(img, *d.contrast);
  if (d.saturation) img = adjustSaturation(img, *d.saturation);
  if (d.hue) img = adjustHue(img, *d.hue);
  if (d.contrast && !d.contrastBefore) img = adjustContrast(img, *d.contrast);
  if (d.permutation) {
    const auto& p = *d.permutation;
    img = img.index_select(0, torch::tensor({p[0], p[1], p[2]}, torch::kLong));
  }
  y.image = img;
  return y;
}

BoxedImage sanitizeBoxes(const BoxedImage& x, double minSize, double minArea) {
  if (x.boxes.numel() == 0) return x;
  const torch::Tensor& b = x.boxes;
  const double h = static_cast<double>(x.image.size(1)), w = static_cast<double>(x.image.size(2));
  const torch::Tensor ws = b.select(1, 2) - b.select(1, 0), hs = b.select(1, 3) - b.select(1, 1);
  torch::Tensor valid = (ws >= minSize) & (hs >= minSize) & (b >= 0).all(-1) & (ws * hs >= minArea);
  valid &= (b.select(1, 0) <= w) & (b.select(1, 2) <= w);
  valid &= (b.select(1, 1) <= h) & (b.select(1, 3) <= h);
  BoxedImage y = x;
  y.boxes = b.index({valid});
  if (x.labels.defined()) y.labels = x.labels.index({valid});
  if (x.masks.defined()) y.masks = x.masks.index({valid});
  return y;
}

PhotometricDraw drawPhotometric(at::Generator& gen) {
  PhotometricDraw d;
  const double p = 0.5;
  if (applies(gen, p)) d.brightness = uniform(gen, 0.875, 1.125);
  if (applies(gen, p)) d.contrast = uniform(gen, 0.5, 1.5);
  if (applies(gen, p)) d.saturation = uniform(gen, 0.5, 1.5);
  if (applies(gen, p)) d.hue = uniform(gen, -0.05, 0.05);
  d.contrastBefore = torch::rand({}, gen).item<double>() < 0.5;
  if (applies(gen, p)) {
    const torch::Tensor perm = torch::randperm(3, gen);
    d.permutation = std::array<int64_t, 3>{perm[0].item<int64_t>(), perm[1].item<int64_t>(), perm[2].item<int64_t>()};
  }
  return d;
}

namespace {

// RandomIoUCrop.make_params; nullopt: the image as it is.
struct CropDraw {
  int64_t top, left, height, width;
  torch::Tensor within;
};
std::optional<CropDraw> drawIouCrop(const BoxedImage& x, at::Generator& gen) {
  static const std::vector<double> options{0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0};
  const int64_t h = x.image.size(1), w = x.image.size(2);
  const double minScale = 0.3, maxScale = 1.0, minAspect = 0.5, maxAspect = 2.0;
  for (;;) {
    const auto idx = torch::randint(0, static_cast<int64_t>(options.size()), {1}, gen).item<int64_t>();
    const double minOverlap = options[static_cast<size_t>(idx)];
    if (minOverlap >= 1.0) return std::nullopt;
    for (int trial = 0; trial < 40; ++trial) {
      // As Python computes them: float32 tensors times Python ints, truncated.
      const torch::Tensor r = minScale + (maxScale - minScale) * torch::rand({2}, gen);
      const auto newW = static_cast<int64_t>((r[0] * w).item<float>());
      const auto newH = static_cast<int64_t>((r[1] * h).item<float>());
      if (newH == 0) continue;  // Python would divide by zero; never with min_scale 0.3 and h >= 4
      const double aspect = static_cast<double>(newW) / static_cast<double>(newH);
      if (!(minAspect <= aspect && aspect <= maxAspect)) continue;
      const torch::Tensor s = torch::rand({2}, gen);
      const auto left = static_cast<int64_t>((s[0] * (w - newW)).item<float>());
      const auto top = static_cast<int64_t>((s[1] * (h - newH)).item<float>());
      const int64_t right = left + newW, bottom = top + newH;
      if (left == right || top == bottom) continue;
      const torch::Tensor& b = x.boxes;
      if (b.numel() == 0) continue;  // no box's centre can be inside
      const torch::Tensor cx = 0.5 * (b.select(1, 0) + b.select(1, 2)), cy = 0.5 * (b.select(1, 1) + b.select(1, 3));
      const torch::Tensor within = (left < cx) & (cx < right) & (top < cy) & (cy < bottom);
      if (!within.any().item<bool>()) continue;
      const torch::Tensor crop = torch::tensor({static_cast<double>(left), static_cast<double>(top),
                                                static_cast<double>(right), static_cast<double>(bottom)},
                                               b.options())
                                     .view({1, 4});
      if ((boxIou(b.index({within}), crop).max() < minOverlap).item<bool>()) continue;
      return CropDraw{top, left, newH, newW, within};
    }
  }
}

}  // namespace

BoxedImage augmentBoxed(BoxedImage x, const BoxAugment& a, at::Generator& gen) {
  if (a.photometric) x = photometricDistort(x, drawPhotometric(gen));
  if (a.zoomOut && applies(gen, 0.5)) {
    const int64_t h = x.image.size(1), w = x.image.size(2);
    const torch::Tensor r = 1.0 + torch::rand({1}, gen) * (a.zoomOutMax - 1.0);  // float32, as v2's
    const auto canvasW = static_cast<int64_t>((r * w).item<float>());
    const auto canvasH = static_cast<int64_t>((r * h).item<float>());
    const torch::Tensor s = torch::rand({2}, gen);
    const auto left = static_cast<int64_t>((s[0] * (canvasW - w)).item<float>());
    const auto top = static_cast<int64_t>((s[1] * (canvasH - h)).item<float>());
    x = zoomOut(x, {left, top, canvasW - (left + w), canvasH - (top + h)}, a.fill);
  }
  if (a.iouCrop)
    if (const auto c = drawIouCrop(x, gen)) x = iouCrop(x, c->top, c->left, c->height, c->width, c->within);
  if (a.horizontalFlip && applies(gen, 0.5)) x = horizontalFlip(x);
  if (!a.shortestSizes.empty()) {
    const int64_t h = x.image.size(1), w = x.image.size(2);
    const auto i = torch::randint(static_cast<int64_t>(a.shortestSizes.size()), {}, gen).item<int64_t>();
    double r = static_cast<double>(a.shortestSizes[static_cast<size_t>(i)]) / static_cast<double>(std::min(h, w));
    if (a.maxSize > 0) r = std::min(r, static_cast<double>(a.maxSize) / static_cast<double>(std::max(h, w)));
    x = resizeBoxed(x, static_cast<int64_t>(static_cast<double>(h) * r),
                    static_cast<int64_t>(static_cast<double>(w) * r));
  }
  return sanitizeBoxes(x);
}

BoxAugment boxAugmentOf(const DataConfig& data) {
  BoxAugment a;
  a.photometric = data.augment_photometric;
  a.zoomOut = data.augment_zoom_out;
  a.iouCrop = data.augment_iou_crop;
  a.horizontalFlip = data.augment_flip;
  return a;
}

}  // namespace studio::detection
