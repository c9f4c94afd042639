#pragma once
// The photo augmentations, with torchvision.transforms.v2's meaning and
// defaults, on whole batches on the training device: RandomResizedCrop,
// RandomVerticalFlip, RandomRotation (nearest, fill 0), ColorJitter
// (brightness, contrast, saturation, hue, in a random order per image) and
// RandomErasing (after normalisation, value 0). Each image's random choices
// are drawn on the CPU from the batch's generator (batch_loader.cpp), so the
// same (seed, epoch, batch) gives the same batch on any device, in either
// loader mode, and after a resume.
// The fixed-parameter operations are exposed: each equals
// torchvision.transforms.v2.functional's on a float image in [0, 1]
// (test_augment compares them).
// Thread: any (the loader's workers, the engine thread).

#include <array>
#include <cstdint>
#include <utility>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

struct PhotoAugment {
  bool resizedCrop = false;  // RandomResizedCrop(size = outHeight x outWidth, or the image's own)
  int64_t outHeight = 0, outWidth = 0;
  double scaleMin = 0.08, scaleMax = 1.0;
  double ratioMin = 3.0 / 4.0, ratioMax = 4.0 / 3.0;
  bool verticalFlip = false;                                     // p 0.5
  double rotation = 0;                                           // degrees: uniform in [-rotation, rotation]
  double brightness = 0, contrast = 0, saturation = 0, hue = 0;  // ColorJitter's
  double erasing = 0;  // RandomErasing's p (scale 0.02-0.33, ratio 0.3-3.3, value 0)
  bool beforeNormalization() const {
    return resizedCrop || verticalFlip || rotation > 0 || brightness > 0 || contrast > 0 || saturation > 0 || hue > 0;
  }
};

// MixUp and CutMix of a training batch and its class labels.
struct BatchMix {
  bool mixup = false, cutmix = false;
  double mixupAlpha = 1.0, cutmixAlpha = 1.0, switchProb = 0.5;
  int64_t classes = 0;
  bool on() const { return mixup || cutmix; }
};
BatchMix batchMix(const DataConfig& data, int64_t classes);

// x [B, C, H, W] (or [B, F] for MixUp), labels int64 [B]: the mixed batch and
// its float32 [B, classes] targets, from the generator (MixUp or CutMix as
// switchProb says; the share from Beta(alpha, alpha)).
std::pair<torch::Tensor, torch::Tensor> mixBatch(const torch::Tensor& x, const torch::Tensor& labels, const BatchMix& m,
                                                 at::Generator& gen);
// torchvision.transforms.v2.MixUp and CutMix with their draws given: the
// batch blended with batch.roll(1, 0) by `lam`, or the box [y1, y2) x
// [x1, x2) taken from it (targets by the box's area).
std::pair<torch::Tensor, torch::Tensor> mixupWith(const torch::Tensor& x, const torch::Tensor& labels, double lam,
                                                  int64_t classes);
std::pair<torch::Tensor, torch::Tensor> cutmixWith(const torch::Tensor& x, const torch::Tensor& labels, int64_t y1,
                                                   int64_t y2, int64_t x1, int64_t x2, int64_t classes);

// The settings' augmentations (data.augment_*).
PhotoAugment photoAugment(const DataConfig& data);

// x: float32 [B, C, H, W] in [0, 1], on any device, the pipeline's own (the
// colour operations write to it); returns the augmented batch
// (RandomResizedCrop, vertical flip, rotation, colour, in that order).
torch::Tensor augmentPhotos(torch::Tensor x, const PhotoAugment& a, at::Generator& gen);
// The RandomResizedCrop of each image of x (float32 in [0, 1], or uint8
// pixels, resized as uint8), to outHeight x outWidth (or its own size).
torch::Tensor randomResizedCrop(const torch::Tensor& x, const PhotoAugment& a, at::Generator& gen);
// Random erasing of a normalised batch.
torch::Tensor eraseRandomly(torch::Tensor x, const PhotoAugment& a, at::Generator& gen);

// torchvision.transforms.v2.functional's operations, on [C, H, W] or [B, C, H, W]:
torch::Tensor resizedCrop(const torch::Tensor& img, int64_t top, int64_t left, int64_t height, int64_t width,
                          int64_t outHeight, int64_t outWidth);  // bilinear, antialias
// The same of one image of any dtype on any device: 8-bit pixels as
// torchvision resizes a uint8 image (ATen's uint8 kernel on the CPU; on a
// GPU as float, rounded back).
torch::Tensor resizedCropPixels(const torch::Tensor& img, int64_t top, int64_t left, int64_t height, int64_t width,
                                int64_t outHeight, int64_t outWidth);
torch::Tensor rotateNearest(const torch::Tensor& img, double degrees);
// The image through an inverse affine matrix (torchvision's
// _get_inverse_affine_matrix: output pixel -> input, about the centre),
// nearest pixels, fill 0 (affine_image's grid).
torch::Tensor affineNearest(const torch::Tensor& img, const std::array<double, 6>& inverse);
torch::Tensor adjustBrightness(const torch::Tensor& img, double factor);
torch::Tensor adjustContrast(const torch::Tensor& img, double factor);
torch::Tensor adjustSaturation(const torch::Tensor& img, double factor);
torch::Tensor adjustHue(const torch::Tensor& img, double factor);
// The same colour operations with one factor per image ([B] float32 on the images' device).
torch::Tensor adjustBrightness(const torch::Tensor& img, const torch::Tensor& factors);
torch::Tensor adjustContrast(const torch::Tensor& img, const torch::Tensor& factors);
torch::Tensor adjustSaturation(const torch::Tensor& img, const torch::Tensor& factors);
torch::Tensor adjustHue(const torch::Tensor& img, const torch::Tensor& factors);

}  // namespace studio
