#pragma once
// torchvision.transforms.v2's RandAugment (Cubuk et al. 2019) and
// TrivialAugmentWide (Müller and Hutter 2021) on float images in [0, 1]:
// their fourteen operations (Identity, ShearX, ShearY, TranslateX,
// TranslateY, Rotate, Brightness, Color, Contrast, Sharpness, Posterize,
// Solarize, AutoContrast, Equalize), their magnitude tables, nearest
// interpolation and fill 0 (their defaults). Each image of a batch draws its
// own operations and signs from the batch's generator (data/augment.h).
// The fixed-parameter operations are exposed: each equals torchvision's
// _apply_image_or_video_transform (test_augment compares them).
// Thread: any.

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

struct AutoAugment {
  AugmentPolicy policy = AugmentPolicy::none;
  int numOps = 2;     // RandAugment's operations per image
  int magnitude = 9;  // RandAugment's bin
  int bins = 31;      // num_magnitude_bins
  bool on() const { return policy != AugmentPolicy::none; }
};
AutoAugment autoAugment(const DataConfig& data);

// The operations in torchvision's order.
const std::vector<std::string>& autoAugmentOps();
// Whether an operation's magnitude is negated with probability 1/2.
bool autoAugmentSigned(int op);
// The magnitude of operation op at bin for an h x w image under the policy
// (torchvision's _AUGMENTATION_SPACE, in float32 as torch computes it); 0
// for the operations without one.
double autoAugmentMagnitude(AugmentPolicy policy, int op, int bin, int bins, int64_t h, int64_t w);

// One operation with its magnitude on [C, H, W] or [B, C, H, W].
torch::Tensor applyAutoAugmentOp(const torch::Tensor& img, int op, double magnitude);

// The batch (float32 [B, C, H, W] in [0, 1]) through the policy, image by image.
torch::Tensor autoAugmentBatch(torch::Tensor x, const AutoAugment& a, at::Generator& gen);

// torchvision.transforms.v2.functional's, on float images in [0, 1]:
torch::Tensor adjustSharpness(const torch::Tensor& img, double factor);
torch::Tensor posterize(const torch::Tensor& img, int bits);
torch::Tensor solarize(const torch::Tensor& img, double threshold);
torch::Tensor autocontrast(const torch::Tensor& img);
torch::Tensor equalize(const torch::Tensor& img);

}  // namespace studio
