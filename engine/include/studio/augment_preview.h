#pragma once
// The augmentation preview (the Data tab): each image drawn several times
// through the training augmentations the settings choose (data.augment_*),
// at the run's input size, by the loader's own code (data/batch_loader.h,
// data/augment.h). Erased rectangles show black.
// Torch-free header; implemented in the engine.
// Thread: any.

#include <array>
#include <cstdint>
#include <vector>

#include "studio/image_file.h"
#include "studio/train_config.h"

namespace studio {

// Per image, `draws` augmented copies of height x width (the image resized
// to it first). Draw k of image i is seeded by (train.seed, i, k).
std::vector<std::vector<Image>> previewAugmentations(const TrainConfig& config, const std::vector<Image>& images,
                                                     int64_t height, int64_t width, int draws);

// An image and its boxes (task.kind detection): x, y, width, height in its
// pixels, and each box's class (0 ..).
struct BoxedPreview {
  Image image;  // RGB
  std::vector<std::array<double, 4>> boxes;
  std::vector<int64_t> labels;
};

// A detector's box augmentations (data.augment_flip, _photometric,
// _zoom_out, _iou_crop; data/box_augment.h, the training step's code):
// per image, `draws` augmented copies with their boxes as they move (those
// the augmentations drop, dropped). Draw k of image i draws from a generator
// seeded by (train.seed, i, k).
std::vector<std::vector<BoxedPreview>> previewBoxAugmentations(const TrainConfig& config,
                                                               const std::vector<BoxedPreview>& images, int draws);

}  // namespace studio
