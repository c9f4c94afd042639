#pragma once
// A semantic segmentation's geometric augmentations, image and mask
// together, as torchvision's references/segmentation train with
// transforms.v2 (presets.py, SegmentationPresetTrain): RandomResize of the
// shorter side to a size drawn in [minSize, maxSize] (the image bilinear
// with antialiasing, 8-bit pixels through ATen's uint8 kernel as v2 resizes
// a uint8 tensor; the mask nearest), RandomHorizontalFlip, PadIfSmaller to
// the crop (right and bottom; the image with 0, the mask with the ignore
// index) and RandomCrop. The fixed-parameter operations equal
// torchvision.transforms.v2.functional's on an Image and a Mask
// (test_mask_augment compares them); the random draws come from the
// batch's generator, as the photo augmentations' (data/augment.h).
// Thread: any (the loader's workers, the engine thread).

#include <cstdint>
#include <utility>

#include <ATen/core/Generator.h>
#include <torch/types.h>

namespace studio {

struct MaskedImage {
  torch::Tensor image;  // uint8 [C, H, W]
  torch::Tensor mask;   // uint8 [H, W]: a class per pixel, or the ignore index
};

// v2.functional.resize(x, [size])'s height and width for an image of
// height x width: the shorter side to size, the longer to
// int(size * longer / shorter).
std::pair<int64_t, int64_t> shorterSideSize(int64_t height, int64_t width, int64_t size);
// v2.functional.resize(x, [size]), image and mask.
MaskedImage resizeShorterSide(const MaskedImage& x, int64_t size);
// Padded on the right and bottom to at least height x width (v2's pad with
// fill 0 for the image and maskFill for the mask).
MaskedImage padIfSmaller(const MaskedImage& x, int64_t height, int64_t width, uint8_t maskFill);
MaskedImage cropMasked(const MaskedImage& x, int64_t top, int64_t left, int64_t height, int64_t width);
MaskedImage flipMasked(const MaskedImage& x);

struct SegmentationAugment {
  int64_t minSize = 0, maxSize = 0;       // RandomResize's; 0: no resize
  double flipProb = 0.5;                  // RandomHorizontalFlip's
  int64_t cropHeight = 0, cropWidth = 0;  // RandomCrop's (after PadIfSmaller); 0: none
  uint8_t ignoreIndex = 255;              // the mask's padding
  // RandomPhotometricDistort on the image after the crop (data.augment_photometric: on the pixels as
  // float in [0, 1], as a detector's, rounded back to 8 bits); the mask as it is.
  bool photometric = false;
};

// The preset's steps in its order, each draw from gen: the size
// (uniform in [minSize, maxSize)), as v2's torch.randint(min, max)), the
// flip, the crop's top and left, then the photometric distortion's
// (detection/box_augment.h's drawPhotometric).
MaskedImage augmentMasked(const MaskedImage& x, const SegmentationAugment& a, at::Generator& gen);

}  // namespace studio
