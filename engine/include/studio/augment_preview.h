#pragma once
// The augmentation preview (the Data tab): each image drawn several times
// through the training augmentations the settings choose (data.augment_*),
// at the run's input size, by the loader's own code (data/batch_loader.h,
// data/augment.h). Erased rectangles show black.
// Torch-free header; implemented in the engine.
// Thread: any.

#include <cstdint>
#include <vector>

#include "studio/image_file.h"
#include "studio/train_config.h"

namespace studio {

// Per image, `draws` augmented copies of height x width (the image resized
// to it first). Draw k of image i is seeded by (train.seed, i, k).
std::vector<std::vector<Image>> previewAugmentations(const TrainConfig& config, const std::vector<Image>& images,
                                                     int64_t height, int64_t width, int draws);

}  // namespace studio
