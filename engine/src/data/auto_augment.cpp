#include "data/auto_augment.h"

#include <ATen/CPUGeneratorImpl.h>

#include <array>
#include <cmath>

#include "data/augment.h"

namespace studio {
namespace {

enum Op {
  Identity,
  ShearX,
  ShearY,
  TranslateX,
  TranslateY,
  Rotate,
  Brightness,
  Color,
  Contrast,
  Sharpness,
  Posterize,
  Solarize,
  AutoContrast,
  Equalize,
  OpCount
};

// Python's math.radians and math.degrees.
double radians(double d) { return d * (M_PI / 180.0); }
double degrees(double r) { return r * (180.0 / M_PI); }

// torchvision's _get_inverse_affine_matrix (scale 1), inverted.
std::array<double, 6> inverseAffine(double cx, double cy, double angle, double tx, double ty, double shearX,
                                    double shearY) {
  const double rot = radians(angle), sx = radians(shearX), sy = radians(shearY);
  const double cosSy = std::cos(sy), tanSx = std::tan(sx), rotMinusSy = rot - sy;
  const double cxPlusTx = cx + tx, cyPlusTy = cy + ty;
  const double a = std::cos(rotMinusSy) / cosSy, b = -(a * tanSx + std::sin(rot));
  const double c = std::sin(rotMinusSy) / cosSy, d = std::cos(rot) - c * tanSx;
  std::array<double, 6> m = {d / 1.0, -b / 1.0, 0.0, -c / 1.0, a / 1.0, 0.0};
  m[2] += cx - m[0] * cxPlusTx - m[1] * cyPlusTy;
  m[5] += cy - m[3] * cxPlusTx - m[4] * cyPlusTy;
  return m;
}

// F.affine with angle 0, scale 1 and center [0, 0] (the top-left corner) for
// a shear, or the image's centre for a translation.
torch::Tensor shear(const torch::Tensor& img, double magnitude, bool alongX) {
  const double w = static_cast<double>(img.size(-1)), h = static_cast<double>(img.size(-2));
  const double s = degrees(std::atan(magnitude));
  return affineNearest(img,
                       inverseAffine(0.0 - w * 0.5, 0.0 - h * 0.5, 0.0, 0.0, 0.0, alongX ? s : 0.0, alongX ? 0.0 : s));
}

torch::Tensor translate(const torch::Tensor& img, double magnitude, bool alongX) {
  const auto t = static_cast<double>(static_cast<int64_t>(magnitude));  // Python's int(): towards zero
  return affineNearest(img, inverseAffine(0.0, 0.0, 0.0, alongX ? t : 0.0, alongX ? 0.0 : t, 0.0, 0.0));
}

float linspaceAt(double end, int bins, int bin, double start = 0.0) {
  return torch::linspace(start, end, bins, torch::kFloat32)[bin].item<float>();
}

}  // namespace

AutoAugment autoAugment(const DataConfig& d) {
  AutoAugment a;
  a.policy = d.augment_policy.value();
  a.numOps = d.augment_policy_ops;
  a.magnitude = d.augment_policy_magnitude;
  a.bins = d.augment_policy_bins;
  return a;
}

const std::vector<std::string>& autoAugmentOps() {
  static const std::vector<std::string> names = {"Identity",  "ShearX",     "ShearY",       "TranslateX", "TranslateY",
                                                 "Rotate",    "Brightness", "Color",        "Contrast",   "Sharpness",
                                                 "Posterize", "Solarize",   "AutoContrast", "Equalize"};
  return names;
}

bool autoAugmentSigned(int op) { return op >= ShearX && op <= Sharpness; }

double autoAugmentMagnitude(AugmentPolicy policy, int op, int bin, int bins, int64_t h, int64_t w) {
  const bool wide = policy == AugmentPolicy::trivialaugment;
  switch (op) {
    case ShearX:
    case ShearY:
      return linspaceAt(wide ? 0.99 : 0.3, bins, bin);
    case TranslateX:
      return linspaceAt(wide ? 32.0 : 150.0 / 331.0 * static_cast<double>(w), bins, bin);
    case TranslateY:
      return linspaceAt(wide ? 32.0 : 150.0 / 331.0 * static_cast<double>(h), bins, bin);
    case Rotate:
      return linspaceAt(wide ? 135.0 : 30.0, bins, bin);
    case Brightness:
    case Color:
    case Contrast:
    case Sharpness:
      return linspaceAt(wide ? 0.99 : 0.9, bins, bin);
    case Posterize:
      return (8 - torch::arange(bins).div((bins - 1) / (wide ? 6.0 : 4.0))).round().to(torch::kInt)[bin].item<int>();
    case Solarize:
      return linspaceAt(0.0, bins, bin, 1.0);
    default:
      return 0.0;
  }
}

torch::Tensor applyAutoAugmentOp(const torch::Tensor& img, int op, double m) {
  switch (op) {
    case ShearX:
      return shear(img, m, true);
    case ShearY:
      return shear(img, m, false);
    case TranslateX:
      return translate(img, m, true);
    case TranslateY:
      return translate(img, m, false);
    case Rotate:
      return rotateNearest(img, m);
    case Brightness:
      return adjustBrightness(img, 1.0 + m);
    case Color:
      return adjustSaturation(img, 1.0 + m);
    case Contrast:
      return adjustContrast(img, 1.0 + m);
    case Sharpness:
      return adjustSharpness(img, 1.0 + m);
    case Posterize:
      return posterize(img, static_cast<int>(m));
    case Solarize:
      return solarize(img, 1.0 * m);
    case AutoContrast:
      return autocontrast(img);
    case Equalize:
      return equalize(img);
    default:
      return img;
  }
}

torch::Tensor autoAugmentBatch(torch::Tensor x, const AutoAugment& a, at::Generator& gen) {
  if (!a.on()) return x;
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  const int64_t ops = a.policy == AugmentPolicy::randaugment ? a.numOps : 1;
  if (ops <= 0) return x;
  const torch::Tensor op = torch::randint(OpCount, {b, ops}, gen, torch::kInt64).contiguous();
  const torch::Tensor bin = torch::randint(a.bins, {b, ops}, gen, torch::kInt64).contiguous();  // TrivialAugment's
  const torch::Tensor sign = torch::rand({b, ops}, gen, torch::kFloat64).contiguous();
  for (int64_t k = 0; k < b; ++k) {
    torch::Tensor img = x.select(0, k);
    for (int64_t j = 0; j < ops; ++j) {
      const auto o = static_cast<int>(op.data_ptr<int64_t>()[k * ops + j]);
      if (o == Identity) continue;
      const int level =
          a.policy == AugmentPolicy::randaugment ? a.magnitude : static_cast<int>(bin.data_ptr<int64_t>()[k * ops + j]);
      double m = autoAugmentMagnitude(a.policy, o, level, a.bins, h, w);
      if (autoAugmentSigned(o) && sign.data_ptr<double>()[k * ops + j] <= 0.5) m = -m;
      img.copy_(applyAutoAugmentOp(img, o, m));  // x is the pipeline's own batch
    }
  }
  return x;
}

torch::Tensor adjustSharpness(const torch::Tensor& img, double factor) {
  const int64_t c = img.size(-3), h = img.size(-2), w = img.size(-1);
  if (img.numel() == 0 || h <= 2 || w <= 2) return img;
  const double a = 1.0 / 13.0, b = 5.0 / 13.0;
  const torch::Tensor kernel = torch::tensor({a, a, a, a, b, a, a, a, a}, torch::kFloat64)
                                   .to(torch::kFloat32)
                                   .to(img.device())
                                   .view({1, 1, 3, 3})
                                   .expand({c, 1, 3, 3});
  torch::Tensor output = (img.dim() == 3 ? img.unsqueeze(0) : img).to(torch::kFloat32, false, /*copy=*/true);
  torch::Tensor blurred = torch::conv2d(output, kernel, torch::Tensor(), torch::IntArrayRef{1}, torch::IntArrayRef{0},
                                        torch::IntArrayRef{1}, c);
  torch::Tensor view = output.narrow(-2, 1, h - 2).narrow(-1, 1, w - 2);
  view.add_(blurred.sub_(view), 1.0 - factor);
  output.clamp_(0, 1.0);
  return img.dim() == 3 ? output.squeeze(0) : output;
}

torch::Tensor posterize(const torch::Tensor& img, int bits) {
  const int levels = 1 << bits;
  return img.mul(levels).floor_().clamp_(0, levels - 1).mul_(1.0 / levels);
}

torch::Tensor solarize(const torch::Tensor& img, double threshold) {
  return torch::where(img >= threshold, 1.0 - img, img);
}

torch::Tensor autocontrast(const torch::Tensor& img) {
  if (img.numel() == 0) return img;
  torch::Tensor minimum = img.amin({-2, -1}, /*keepdim=*/true);
  torch::Tensor maximum = img.amax({-2, -1}, /*keepdim=*/true);
  const torch::Tensor equal = maximum == minimum;
  torch::Tensor invScale = maximum.sub_(minimum).mul_(1.0 / 1.0);
  minimum.index_put_({equal}, 0.0);
  invScale.index_put_({equal}, 1.0);
  return img.sub(minimum).div_(invScale).clamp_(0, 1.0);
}

torch::Tensor equalize(const torch::Tensor& img) {
  if (img.numel() == 0) return img;
  // to_dtype_image(uint8, scale): x * (255 + 1 - 1e-3), truncated.
  const torch::Tensor image = img.mul(255.0 + 1.0 - 1e-3).to(torch::kUInt8);
  std::vector<int64_t> batchShape(image.sizes().begin(), image.sizes().end() - 2);
  const torch::Tensor flat = image.flatten(-2).to(torch::kLong);
  std::vector<int64_t> histShape = batchShape;
  histShape.push_back(256);
  torch::Tensor hist = torch::zeros(histShape, flat.options().dtype(torch::kInt32));
  hist.scatter_add_(-1, flat, torch::ones({1}, hist.options()).expand_as(flat));
  torch::Tensor cum = hist.cumsum(-1);
  torch::Tensor index = cum.argmax(-1);
  torch::Tensor nonMax = flat.size(-1) - hist.gather(-1, index.unsqueeze_(-1));
  torch::Tensor step = nonMax.div_(255, "floor");
  const torch::Tensor valid = step.ne(0).unsqueeze_(-1);
  cum = cum.narrow(-1, 0, 255);
  const torch::Tensor half = torch::floor_divide(step, 2);
  cum.add_(half).div_(step.clamp_(1), "floor").clamp_(0, 255);
  std::vector<int64_t> zeroShape = batchShape;
  zeroShape.push_back(1);
  torch::Tensor lut = torch::cat({torch::zeros(zeroShape, image.options()), cum.to(torch::kUInt8)}, -1);
  const torch::Tensor equalized = lut.gather(-1, flat).view_as(image);
  return torch::where(valid, equalized, image).to(torch::kFloat32).mul_(1.0 / 255.0);
}

}  // namespace studio
