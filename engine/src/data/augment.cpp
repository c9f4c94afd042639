#include "data/augment.h"

#include <torch/nn/functional/upsampling.h>
#include <torch/nn/functional/vision.h>

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

namespace studio {
namespace {

namespace F = torch::nn::functional;

torch::Tensor batched(const torch::Tensor& img) { return img.dim() == 3 ? img.unsqueeze(0) : img; }
torch::Tensor unbatched(const torch::Tensor& out, const torch::Tensor& like) {
  return like.dim() == 3 ? out.squeeze(0) : out;
}

// Python's round(): halves to even.
int64_t pyRound(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

// A [B] factor tensor shaped to broadcast over [B, C, H, W].
torch::Tensor perImage(const torch::Tensor& f, const torch::Tensor& img) {
  return f.to(img.device(), img.scalar_type()).view({-1, 1, 1, 1});
}

// _blend: image1 * ratio + image2 * (1 - ratio), clamped to [0, 1].
torch::Tensor blend(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ratio) {
  return (a * ratio).add_(b * (1.0 - ratio)).clamp_(0.0, 1.0);
}

// _rgb_to_grayscale_image: 0.2989 r + 0.587 g + 0.114 b, [B, 1, H, W].
torch::Tensor grayscale(const torch::Tensor& x) {
  auto c = x.unbind(1);
  return c[0].mul(0.2989).add_(c[1], 0.587).add_(c[2], 0.114).unsqueeze(1);
}

// torchvision's _rgb_to_hsv and _hsv_to_rgb (after Pillow's), on [B, 3, H, W].
torch::Tensor rgbToHsv(const torch::Tensor& image) {
  auto rgb = image.unbind(1);
  const torch::Tensor &r = rgb[0], &g = rgb[1];
  auto [minc, maxc] = torch::aminmax(image, 1);
  const torch::Tensor eqc = maxc == minc;
  const torch::Tensor range = maxc - minc;
  const torch::Tensor ones = torch::ones_like(maxc);
  const torch::Tensor s = range / torch::where(eqc, ones, maxc);
  const torch::Tensor divisor = torch::where(eqc, ones, range).unsqueeze(1);
  auto cs = ((maxc.unsqueeze(1) - image) / divisor).unbind(1);
  torch::Tensor rc = cs[0], gc = cs[1], bc = cs[2];
  const torch::Tensor maxNeR = maxc != r, maxEqG = maxc == g;
  torch::Tensor hg = rc.add(2.0).sub_(bc).mul_(maxEqG & maxNeR);
  torch::Tensor hr = bc.sub(gc).mul_(maxNeR.logical_not());
  torch::Tensor hb = gc.add(4.0).sub_(rc).mul_(maxNeR.logical_and(maxEqG.logical_not()));
  torch::Tensor h = hr.add_(hg).add_(hb).mul_(1.0 / 6.0).add_(1.0).fmod_(1.0);
  return torch::stack({h, s, maxc}, 1);
}

torch::Tensor hsvToRgb(const torch::Tensor& img) {
  auto hsv = img.unbind(1);
  const torch::Tensor &h = hsv[0], &s = hsv[1], &v = hsv[2];
  torch::Tensor h6 = h.mul(6);
  torch::Tensor i = torch::floor(h6);
  torch::Tensor f = h6.sub_(i);
  i = i.to(torch::kInt32);
  torch::Tensor sxf = s * f;
  torch::Tensor oneMinusS = 1.0 - s;
  torch::Tensor q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0);
  torch::Tensor t = sxf.add_(oneMinusS).mul_(v).clamp_(0.0, 1.0);
  torch::Tensor p = oneMinusS.mul_(v).clamp_(0.0, 1.0);
  i.remainder_(6);
  torch::Tensor vpqt = torch::stack({v, p, q, t}, 1);
  torch::Tensor select =
      torch::tensor({0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2}, torch::kLong).view({3, 6}).to(img.device());
  select = select.index({torch::indexing::Slice(), i.to(torch::kLong)}).movedim(0, 1);  // [B, 3, H, W]
  return vpqt.gather(1, select);
}

}  // namespace

PhotoAugment photoAugment(const DataConfig& d) {
  PhotoAugment a;
  a.resizedCrop = d.augment_resized_crop;
  a.scaleMin = d.augment_crop_scale_min;
  a.scaleMax = d.augment_crop_scale_max;
  a.ratioMin = d.augment_crop_ratio_min;
  a.ratioMax = d.augment_crop_ratio_max;
  a.verticalFlip = d.augment_vflip;
  a.rotation = d.augment_rotation;
  a.brightness = d.augment_brightness;
  a.contrast = d.augment_contrast;
  a.saturation = d.augment_saturation;
  a.hue = d.augment_hue;
  a.erasing = d.augment_erasing;
  return a;
}

torch::Tensor resizedCrop(const torch::Tensor& img, int64_t top, int64_t left, int64_t height, int64_t width,
                          int64_t outHeight, int64_t outWidth) {
  torch::Tensor x = batched(img).slice(2, top, top + height).slice(3, left, left + width);
  if (height != outHeight || width != outWidth)
    x = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{outHeight, outWidth})
                              .mode(torch::kBilinear)
                              .align_corners(false)
                              .antialias(true));
  return unbatched(x, img);
}

torch::Tensor resizedCropPixels(const torch::Tensor& img, int64_t top, int64_t left, int64_t height, int64_t width,
                                int64_t outHeight, int64_t outWidth) {
  if (img.scalar_type() != torch::kUInt8) return resizedCrop(img, top, left, height, width, outHeight, outWidth);
  // 8-bit pixels on the CPU go through ATen's uint8 antialiased kernel in
  // channels-last order (torchvision's resize of a uint8 image); on a GPU
  // they are resized as float and rounded back.
  if (img.is_cuda())
    return resizedCrop(img.to(torch::kFloat32), top, left, height, width, outHeight, outWidth)
        .round_()
        .clamp_(0, 255)
        .to(torch::kUInt8);
  return resizedCrop(img.unsqueeze(0).contiguous(torch::MemoryFormat::ChannelsLast).squeeze(0), top, left, height,
                     width, outHeight, outWidth);
}

namespace {

// _get_inverse_affine_matrix(center 0, -angle, translate 0, scale 1, shear 0).
std::array<double, 6> inverseRotation(double degrees) {
  const double rot = (-degrees) * M_PI / 180.0;
  const double a = std::cos(rot), b = -std::cos(rot) * std::tan(0.0) / std::cos(0.0) - std::sin(rot);
  const double c = std::sin(rot), d = -std::sin(rot) * std::tan(0.0) / std::cos(0.0) + std::cos(rot);
  return {d, -b, 0.0, -c, a, 0.0};
}

// _affine_grid for a [B, 2, 3] float32 theta, then grid_sample (nearest, zeros).
torch::Tensor rotateWith(const torch::Tensor& x, const torch::Tensor& theta) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(x.device());
  torch::Tensor base = torch::empty({1, h, w, 3}, opts);
  base.select(3, 0).copy_(torch::linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, w, opts));
  base.select(3, 1).copy_(torch::linspace((1.0 - h) * 0.5, (h - 1.0) * 0.5, h, opts).unsqueeze(-1));
  base.select(3, 2).fill_(1);
  torch::Tensor rescaled = theta.to(x.device()).transpose(1, 2).div(torch::tensor({0.5 * w, 0.5 * h}, opts));
  torch::Tensor grid = base.view({1, h * w, 3}).expand({b, h * w, 3}).bmm(rescaled).view({b, h, w, 2});
  torch::Tensor in = x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32);
  return F::grid_sample(
      in, grid, F::GridSampleFuncOptions().mode(torch::kNearest).padding_mode(torch::kZeros).align_corners(false));
}

torch::Tensor thetaOf(const std::vector<double>& degrees) {
  std::vector<float> values;
  for (double deg : degrees)
    for (double v : inverseRotation(deg)) values.push_back(static_cast<float>(v));
  return torch::tensor(values, torch::kFloat32).view({static_cast<int64_t>(degrees.size()), 2, 3});
}

}  // namespace

torch::Tensor affineNearest(const torch::Tensor& img, const std::array<double, 6>& inverse) {
  std::vector<float> values(inverse.begin(), inverse.end());
  return unbatched(rotateWith(batched(img), torch::tensor(values, torch::kFloat32).view({1, 2, 3})), img);
}

torch::Tensor rotateNearest(const torch::Tensor& img, double degrees) {
  torch::Tensor x = batched(img);
  const double angle = std::fmod(std::fmod(degrees, 360.0) + 360.0, 360.0);
  if (angle == 0) return img.clone();
  if (angle == 180) return torch::rot90(img, 2, {-2, -1});
  if (x.size(2) == x.size(3) && (angle == 90 || angle == 270)) return torch::rot90(img, angle == 90 ? 1 : 3, {-2, -1});
  return unbatched(rotateWith(x, thetaOf({angle})), img);
}

torch::Tensor adjustBrightness(const torch::Tensor& img, const torch::Tensor& f) {
  torch::Tensor x = batched(img);
  return unbatched((x * perImage(f, x)).clamp_(0.0, 1.0), img);
}

torch::Tensor adjustContrast(const torch::Tensor& img, const torch::Tensor& f) {
  torch::Tensor x = batched(img);
  const torch::Tensor gray = x.size(1) == 3 ? grayscale(x) : x;
  return unbatched(blend(x, gray.mean({1, 2, 3}, /*keepdim=*/true), perImage(f, x)), img);
}

torch::Tensor adjustSaturation(const torch::Tensor& img, const torch::Tensor& f) {
  torch::Tensor x = batched(img);
  if (x.size(1) != 3) return img;
  return unbatched(blend(x, grayscale(x), perImage(f, x)), img);
}

torch::Tensor adjustHue(const torch::Tensor& img, const torch::Tensor& f) {
  torch::Tensor x = batched(img);
  if (x.size(1) != 3) return img;
  auto hsv = rgbToHsv(x).unbind(1);
  torch::Tensor h = hsv[0].add(perImage(f, x).view({-1, 1, 1})).remainder_(1.0);
  return unbatched(hsvToRgb(torch::stack({h, hsv[1], hsv[2]}, 1)), img);
}

torch::Tensor adjustBrightness(const torch::Tensor& img, double f) { return adjustBrightness(img, torch::tensor({f})); }
torch::Tensor adjustContrast(const torch::Tensor& img, double f) { return adjustContrast(img, torch::tensor({f})); }
torch::Tensor adjustSaturation(const torch::Tensor& img, double f) { return adjustSaturation(img, torch::tensor({f})); }
torch::Tensor adjustHue(const torch::Tensor& img, double f) { return adjustHue(img, torch::tensor({f})); }

namespace {

struct Box {
  int64_t top, left, height, width;
};

// RandomResizedCrop.get_params' and RandomErasing.get_params' draw: up to 10
// tries of an area (a share of the image's from scale, uniform u[2t]) and an
// aspect (log-uniform in ratio, u[2t + 1]); sides sqrt(area * aspect) and
// sqrt(area / aspect), the first the width (RandomResizedCrop) or the height
// (RandomErasing); the first try `fits` (height, width) takes, its corner
// from the two uniforms in `corner`. None when no try fits.
std::optional<Box> drawBox(const double* u, const double* corner, int64_t h, int64_t w, double scaleLo, double scaleHi,
                           double ratioLo, double ratioHi, bool heightFromAspect,
                           const std::function<bool(int64_t, int64_t)>& fits) {
  const double logLo = std::log(ratioLo), logHi = std::log(ratioHi);
  for (int t = 0; t < 10; ++t) {
    const double area = static_cast<double>(h * w) * (scaleLo + (scaleHi - scaleLo) * u[2 * t]);
    const double aspect = std::exp(logLo + (logHi - logLo) * u[2 * t + 1]);
    const int64_t along = pyRound(std::sqrt(area * aspect)), across = pyRound(std::sqrt(area / aspect));
    const int64_t bh = heightFromAspect ? along : across, bw = heightFromAspect ? across : along;
    if (!fits(bh, bw)) continue;
    return Box{static_cast<int64_t>(corner[0] * static_cast<double>(h - bh + 1)),
               static_cast<int64_t>(corner[1] * static_cast<double>(w - bw + 1)), bh, bw};
  }
  return std::nullopt;
}

}  // namespace

torch::Tensor randomResizedCrop(const torch::Tensor& x, const PhotoAugment& a, at::Generator& gen) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  const int64_t outH = a.outHeight > 0 ? a.outHeight : h, outW = a.outWidth > 0 ? a.outWidth : w;
  const torch::Tensor u = torch::rand({b, 10, 2}, gen, torch::kFloat64).contiguous();
  const torch::Tensor corner = torch::rand({b, 2}, gen, torch::kFloat64).contiguous();
  const double* pu = u.data_ptr<double>();
  const double* pc = corner.data_ptr<double>();
  auto fits = [&](int64_t ch, int64_t cw) { return cw > 0 && cw <= w && ch > 0 && ch <= h; };
  torch::Tensor out = torch::empty({b, x.size(1), outH, outW}, x.options());
  for (int64_t k = 0; k < b; ++k) {
    std::optional<Box> box = drawBox(pu + k * 20, pc + k * 2, h, w, a.scaleMin, a.scaleMax, a.ratioMin, a.ratioMax,
                                     /*heightFromAspect=*/false, fits);
    if (!box) {  // the central crop of the nearest allowed ratio
      const double inRatio = static_cast<double>(w) / static_cast<double>(h);
      int64_t cw = w, ch = h;
      if (inRatio < a.ratioMin)
        ch = pyRound(static_cast<double>(cw) / a.ratioMin);
      else if (inRatio > a.ratioMax)
        cw = pyRound(static_cast<double>(ch) * a.ratioMax);
      box = Box{(h - ch) / 2, (w - cw) / 2, ch, cw};
    }
    out.select(0, k).copy_(resizedCropPixels(x.select(0, k), box->top, box->left, box->height, box->width, outH, outW));
  }
  return out;
}

torch::Tensor augmentPhotos(torch::Tensor x, const PhotoAugment& a, at::Generator& gen) {
  const int64_t b = x.size(0);
  auto toDevice = [&](const torch::Tensor& t) {
    return x.is_cuda() ? t.pin_memory().to(x.device(), /*non_blocking=*/true) : t;
  };
  if (a.resizedCrop) x = randomResizedCrop(x, a, gen);
  if (a.verticalFlip) {
    torch::Tensor flip = toDevice(torch::rand({b}, gen).lt(0.5)).view({b, 1, 1, 1});
    x = torch::where(flip, x.flip({2}), x);
  }
  if (a.rotation > 0) {
    const torch::Tensor u = torch::rand({b}, gen, torch::kFloat64).contiguous();
    std::vector<double> degrees;
    for (int64_t k = 0; k < b; ++k) degrees.push_back(-a.rotation + 2.0 * a.rotation * u.data_ptr<double>()[k]);
    x = rotateWith(x, toDevice(thetaOf(degrees)));
  }
  const std::array<double, 4> amount = {a.brightness, a.contrast, a.saturation, a.hue};
  if (a.brightness > 0 || a.contrast > 0 || a.saturation > 0 || a.hue > 0) {
    // Each image: a random order of the four, and a factor for each that is on.
    const torch::Tensor order = torch::rand({b, 4}, gen).argsort(/*stable=*/false, /*dim=*/1).contiguous();
    const torch::Tensor u = torch::rand({b, 4}, gen, torch::kFloat64).contiguous();
    torch::Tensor factors = torch::empty({b, 4}, torch::kFloat64);
    for (int op = 0; op < 4; ++op) {
      const double lo = op == 3 ? -amount[3] : std::max(0.0, 1.0 - amount[op]);
      const double hi = op == 3 ? amount[3] : 1.0 + amount[op];
      factors.select(1, op).copy_(u.select(1, op) * (hi - lo) + lo);
    }
    const int64_t* po = order.data_ptr<int64_t>();
    auto adjust = [](int op, const torch::Tensor& img, const torch::Tensor& f) {
      return op == 0   ? adjustBrightness(img, f)
             : op == 1 ? adjustContrast(img, f)
             : op == 2 ? adjustSaturation(img, f)
                       : adjustHue(img, f);
    };
    if (!x.is_cuda()) {
      // On the CPU image by image, in its order: each image stays in the
      // cache through its operations (the same arithmetic as the groups').
      const torch::Tensor f32 = factors.to(torch::kFloat32);
      for (int64_t k = 0; k < b; ++k) {
        torch::Tensor img = x.select(0, k);
        for (int pos = 0; pos < 4; ++pos) {
          const auto op = static_cast<int>(po[k * 4 + pos]);
          if (amount[static_cast<size_t>(op)] > 0) img.copy_(adjust(op, img, f32.select(0, k).narrow(0, op, 1)));
        }
      }
      return x;
    }
    for (int pos = 0; pos < 4; ++pos) {
      for (int op = 0; op < 4; ++op) {
        if (amount[op] <= 0) continue;
        std::vector<int64_t> picked;
        for (int64_t k = 0; k < b; ++k)
          if (po[k * 4 + pos] == op) picked.push_back(k);
        if (picked.empty()) continue;
        const torch::Tensor idxCpu = torch::tensor(picked, torch::kInt64);
        const torch::Tensor idx = toDevice(idxCpu);
        const torch::Tensor f = toDevice(factors.select(1, op).index_select(0, idxCpu).to(torch::kFloat32));
        x.index_copy_(0, idx, adjust(op, x.index_select(0, idx), f));  // x is the pipeline's own batch
      }
    }
  }
  return x;
}

torch::Tensor eraseRandomly(torch::Tensor x, const PhotoAugment& a, at::Generator& gen) {
  if (a.erasing <= 0) return x;
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  const torch::Tensor apply = torch::rand({b}, gen, torch::kFloat64).contiguous();
  const torch::Tensor u = torch::rand({b, 10, 2}, gen, torch::kFloat64).contiguous();
  const torch::Tensor corner = torch::rand({b, 2}, gen, torch::kFloat64).contiguous();
  auto fits = [&](int64_t eh, int64_t ew) { return eh < h && ew < w; };
  x = x.clone();
  for (int64_t k = 0; k < b; ++k) {
    if (apply.data_ptr<double>()[k] >= a.erasing) continue;
    // RandomErasing's defaults: scale 0.02-0.33, ratio 0.3-3.3.
    const std::optional<Box> box = drawBox(u.data_ptr<double>() + k * 20, corner.data_ptr<double>() + k * 2, h, w, 0.02,
                                           0.33, 0.3, 3.3, /*heightFromAspect=*/true, fits);
    if (box)
      x.select(0, k).slice(1, box->top, box->top + box->height).slice(2, box->left, box->left + box->width).zero_();
  }
  return x;
}

BatchMix batchMix(const DataConfig& d, int64_t classes) {
  BatchMix m;
  m.mixup = d.augment_mixup;
  m.cutmix = d.augment_cutmix;
  m.mixupAlpha = d.mixup_alpha;
  m.cutmixAlpha = d.cutmix_alpha;
  m.switchProb = d.mix_switch_prob;
  m.classes = classes;
  return m;
}

namespace {

torch::Tensor oneHot(const torch::Tensor& labels, int64_t classes) {
  return torch::one_hot(labels.to(torch::kInt64), classes).to(torch::kFloat32);
}

torch::Tensor mixTargets(const torch::Tensor& labels, double lam, int64_t classes) {
  const torch::Tensor y = oneHot(labels, classes);
  return y.roll(1, 0).mul_(1.0 - lam).add_(y.mul(lam));
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> mixupWith(const torch::Tensor& x, const torch::Tensor& labels, double lam,
                                                  int64_t classes) {
  torch::Tensor out = x.roll(1, 0).mul_(1.0 - lam).add_(x.mul(lam));
  return {out, mixTargets(labels, lam, classes)};
}

std::pair<torch::Tensor, torch::Tensor> cutmixWith(const torch::Tensor& x, const torch::Tensor& labels, int64_t y1,
                                                   int64_t y2, int64_t x1, int64_t x2, int64_t classes) {
  const int64_t h = x.size(-2), w = x.size(-1);
  torch::Tensor out = x.clone();
  out.slice(-2, y1, y2).slice(-1, x1, x2).copy_(x.roll(1, 0).slice(-2, y1, y2).slice(-1, x1, x2));
  const double lam = 1.0 - static_cast<double>((x2 - x1) * (y2 - y1)) / static_cast<double>(w * h);
  return {out, mixTargets(labels, lam, classes)};
}

std::pair<torch::Tensor, torch::Tensor> mixBatch(const torch::Tensor& x, const torch::Tensor& labels, const BatchMix& m,
                                                 at::Generator& gen) {
  const bool cut = m.cutmix && (!m.mixup || torch::rand({1}, gen, torch::kFloat64).item<double>() < m.switchProb);
  const double alpha = cut ? m.cutmixAlpha : m.mixupAlpha;
  // Beta(alpha, alpha) as G1 / (G1 + G2) of two Gamma(alpha) draws.
  const torch::Tensor g = at::_standard_gamma(torch::full({2}, alpha, torch::kFloat64), gen).contiguous();
  const double g1 = g.data_ptr<double>()[0], g2 = g.data_ptr<double>()[1];
  const double lam = g1 + g2 > 0 ? g1 / (g1 + g2) : 0.5;
  if (!cut) return mixupWith(x, labels, lam, m.classes);
  const int64_t h = x.size(-2), w = x.size(-1);
  const torch::Tensor centre = torch::rand({2}, gen, torch::kFloat64).contiguous();
  const int64_t rx = static_cast<int64_t>(centre.data_ptr<double>()[0] * static_cast<double>(w));
  const int64_t ry = static_cast<int64_t>(centre.data_ptr<double>()[1] * static_cast<double>(h));
  const double r = 0.5 * std::sqrt(1.0 - lam);
  const int64_t rw = static_cast<int64_t>(r * static_cast<double>(w)),
                rh = static_cast<int64_t>(r * static_cast<double>(h));
  const int64_t x1 = std::max<int64_t>(rx - rw, 0), y1 = std::max<int64_t>(ry - rh, 0);
  const int64_t x2 = std::min<int64_t>(rx + rw, w), y2 = std::min<int64_t>(ry + rh, h);
  return cutmixWith(x, labels, y1, y2, x1, x2, m.classes);
}

}  // namespace studio
