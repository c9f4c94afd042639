#include "data/mask_augment.h"

#include <torch/nn/functional/padding.h>
#include <torch/nn/functional/upsampling.h>

#include <algorithm>

#include "data/augment.h"
#include "data/box_augment.h"

namespace studio {
namespace {

namespace F = torch::nn::functional;

}  // namespace

std::pair<int64_t, int64_t> shorterSideSize(int64_t h, int64_t w, int64_t size) {
  const int64_t shorter = std::min(h, w), longer = std::max(h, w);
  const auto scaled =
      static_cast<int64_t>(static_cast<double>(size) * static_cast<double>(longer) / static_cast<double>(shorter));
  return w <= h ? std::pair{scaled, size} : std::pair{size, scaled};
}

MaskedImage resizeShorterSide(const MaskedImage& x, int64_t size) {
  const int64_t h = x.image.size(1), w = x.image.size(2);
  const auto [outH, outW] = shorterSideSize(h, w, size);
  if (outH == h && outW == w) return x;
  const torch::Tensor image = resizedCropPixels(x.image, 0, 0, h, w, outH, outW).contiguous();
  const torch::Tensor mask =
      F::interpolate(x.mask.unsqueeze(0).unsqueeze(0),
                     F::InterpolateFuncOptions().size(std::vector<int64_t>{outH, outW}).mode(torch::kNearest))
          .squeeze(0)
          .squeeze(0);
  return {image, mask};
}

MaskedImage padIfSmaller(const MaskedImage& x, int64_t height, int64_t width, uint8_t maskFill) {
  const int64_t h = x.image.size(1), w = x.image.size(2);
  const int64_t right = std::max<int64_t>(width - w, 0), bottom = std::max<int64_t>(height - h, 0);
  if (right == 0 && bottom == 0) return x;
  auto pad = [&](const torch::Tensor& t, double fill) {
    return F::pad(t, F::PadFuncOptions({0, right, 0, bottom}).mode(torch::kConstant).value(fill));
  };
  return {pad(x.image, 0), pad(x.mask, maskFill)};
}

MaskedImage cropMasked(const MaskedImage& x, int64_t top, int64_t left, int64_t height, int64_t width) {
  return {x.image.slice(1, top, top + height).slice(2, left, left + width),
          x.mask.slice(0, top, top + height).slice(1, left, left + width)};
}

MaskedImage flipMasked(const MaskedImage& x) { return {x.image.flip({-1}), x.mask.flip({-1})}; }

MaskedImage augmentMasked(const MaskedImage& in, const SegmentationAugment& a, at::Generator& gen) {
  MaskedImage x = in;
  if (a.minSize > 0 && a.maxSize > a.minSize) {
    const int64_t size = torch::randint(a.minSize, a.maxSize, {1}, gen, torch::kInt64).item<int64_t>();
    x = resizeShorterSide(x, size);
  }
  if (a.flipProb > 0 && torch::rand({1}, gen, torch::kFloat64).item<double>() < a.flipProb) x = flipMasked(x);
  if (a.cropHeight > 0 && a.cropWidth > 0) {
    x = padIfSmaller(x, a.cropHeight, a.cropWidth, a.ignoreIndex);
    const int64_t h = x.image.size(1), w = x.image.size(2);
    const int64_t top = torch::randint(0, h - a.cropHeight + 1, {1}, gen, torch::kInt64).item<int64_t>();
    const int64_t left = torch::randint(0, w - a.cropWidth + 1, {1}, gen, torch::kInt64).item<int64_t>();
    x = cropMasked(x, top, left, a.cropHeight, a.cropWidth);
  }
  if (a.photometric) {  // on the pixels as float in [0, 1] (as a detector's images), rounded back to 8 bits
    const torch::Tensor unit = x.image.to(torch::kFloat32).div_(255.0);
    const torch::Tensor changed = detection::photometricDistort({unit, {}, {}}, detection::drawPhotometric(gen)).image;
    x.image = changed.mul(255.0).round_().clamp_(0.0, 255.0).to(torch::kUInt8);
  }
  return {x.image.contiguous(), x.mask.contiguous()};
}

}  // namespace studio
