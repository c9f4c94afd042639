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

#include <cstdint>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

struct PhotoAugment {
  bool resizedCrop = false;  // RandomResizedCrop(size = the image's own)
  double scaleMin = 0.08, scaleMax = 1.0;
  double ratioMin = 3.0 / 4.0, ratioMax = 4.0 / 3.0;
  bool verticalFlip = false;  // p 0.5
  double rotation = 0;        // degrees: uniform in [-rotation, rotation]
  double brightness = 0, contrast = 0, saturation = 0, hue = 0;  // ColorJitter's
  double erasing = 0;         // RandomErasing's p (scale 0.02-0.33, ratio 0.3-3.3, value 0)
  bool beforeNormalization() const {
    return resizedCrop || verticalFlip || rotation > 0 || brightness > 0 || contrast > 0 || saturation > 0 || hue > 0;
  }
};

// The settings' augmentations (data.augment_*).
PhotoAugment photoAugment(const DataConfig& data);

// x: float32 [B, C, H, W] in [0, 1], on any device; returns the augmented
// batch (RandomResizedCrop, vertical flip, rotation, colour, in that order).
torch::Tensor augmentPhotos(torch::Tensor x, const PhotoAugment& a, at::Generator& gen);
// Random erasing of a normalised batch.
torch::Tensor eraseRandomly(torch::Tensor x, const PhotoAugment& a, at::Generator& gen);

// torchvision.transforms.v2.functional's operations, on [C, H, W] or [B, C, H, W]:
torch::Tensor resizedCrop(const torch::Tensor& img, int64_t top, int64_t left, int64_t height, int64_t width,
                          int64_t outHeight, int64_t outWidth);  // bilinear, antialias
torch::Tensor rotateNearest(const torch::Tensor& img, double degrees);
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
