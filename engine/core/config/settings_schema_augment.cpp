// The image augmentations' settings (data.augment_*, MixUp and CutMix), in
// the Data group of the settings schema; data/augment.h and
// data/auto_augment.h apply them.
#include "schema_builder.h"

namespace studio::schema {

void addAugmentSettings(Fields& add) {
  const std::string data = "Data";
  add.forks = true;  // regularisation: a fork may change any of them
  // Detection's boxes and segmentation's masks follow only the flip among
  // these (settings_schema_detection.cpp and _segmentation.cpp have theirs).
  const Rule images{
      [](const TrainConfig& c) { return c.data.format != DataFormat::csv && !annotatedTask(c.task.kind); },
      "images (data.format idx or image_folder), task.kind not detection, segmentation or instance_segmentation"};
  when(imagesOnly(add(SETTING(data.augment_flip), data, "Random horizontal flip", T::Bool,
                      "Mirror training images at random; more variety, less overfitting on longer runs. Detection and "
                      "segmentation: the boxes or masks are mirrored with them (RandomHorizontalFlip, p 0.5).")),
       Rule{[](const TrainConfig& c) { return c.data.format != DataFormat::csv; },
            "images (data.format idx or image_folder)"});
  when(range(imagesOnly(add(SETTING(data.augment_crop), data, "Random crop padding (px)", T::Int,
                            "Pad by this many pixels and crop back at a random offset (0: off); less overfitting.")),
             between(0, 8)),
       images);

  // torchvision.transforms.v2's photo augmentations (data/augment.h).
  when(imagesOnly(
           add(SETTING(data.augment_resized_crop), data, "Random resized crop", T::Bool,
               "RandomResizedCrop: a random part of each training image (its area and shape below) resized back to "
               "the image size; the usual augmentation for photos.")),
       images);
  const Rule resized{
      [](const TrainConfig& c) { return c.data.augment_resized_crop && c.data.format != DataFormat::csv; },
      "data.augment_resized_crop on images"};
  when(range(add(SETTING(data.augment_crop_scale_min), data, "Resized crop: smallest area", T::Real,
                 "The smallest share of the image's area a random resized crop takes (torchvision: 0.08)."),
             between(0, 1, true, false)),
       resized, true);
  when(range(add(SETTING(data.augment_crop_scale_max), data, "Resized crop: largest area", T::Real,
                 "The largest share of the image's area a random resized crop takes (torchvision: 1)."),
             between(0, 1, true, false)),
       resized, true);
  when(range(add(SETTING(data.augment_crop_ratio_min), data, "Resized crop: narrowest shape", T::Real,
                 "The smallest width / height of a random resized crop (torchvision: 3/4)."),
             above(0)),
       resized, true);
  when(range(add(SETTING(data.augment_crop_ratio_max), data, "Resized crop: widest shape", T::Real,
                 "The largest width / height of a random resized crop (torchvision: 4/3)."),
             above(0)),
       resized, true);
  when(
      imagesOnly(add(SETTING(data.augment_vflip), data, "Random vertical flip", T::Bool,
                     "Turn training images upside down at random (p 0.5): for photos with no up, such as microscopy or "
                     "satellite images.")),
      images);
  when(range(imagesOnly(
                 add(SETTING(data.augment_rotation), data, "Random rotation (degrees)", T::Real,
                     "Rotate each training image by an angle drawn from -this to +this (nearest pixel, corners black); "
                     "0: off.")),
             between(0, 180)),
       images, true);
  when(
      range(imagesOnly(add(SETTING(data.augment_brightness), data, "Colour jitter: brightness", T::Real,
                           "ColorJitter: scale the brightness by a factor from 1 - this to 1 + this (0: off). The four "
                           "colour changes run in a random order per image.")),
            atLeast(0)),
      images, true);
  when(range(imagesOnly(add(SETTING(data.augment_contrast), data, "Colour jitter: contrast", T::Real,
                            "ColorJitter: scale the contrast by a factor from 1 - this to 1 + this (0: off).")),
             atLeast(0)),
       images, true);
  when(range(imagesOnly(
                 add(SETTING(data.augment_saturation), data, "Colour jitter: saturation", T::Real,
                     "ColorJitter: scale the saturation by a factor from 1 - this to 1 + this (0: off; RGB images).")),
             atLeast(0)),
       images, true);
  when(range(imagesOnly(
                 add(SETTING(data.augment_hue), data, "Colour jitter: hue", T::Real,
                     "ColorJitter: shift the hue by up to this share of the colour wheel either way (0 to 0.5; RGB "
                     "images).")),
             between(0, 0.5)),
       images, true);
  when(imagesOnly(add(SETTING(data.augment_policy), data, "Augmentation policy", T::Choice,
                      "RandAugment: each training image through N operations drawn from fourteen (shears, "
                      "translations, rotation, colour, sharpness, posterize, solarize, autocontrast, equalize) at one "
                      "magnitude; TrivialAugmentWide: one operation at a random magnitude, nothing to tune. "
                      "torchvision.transforms.v2's, after the flips and before the colour jitter.")),
       images);
  const Rule randaugment{[](const TrainConfig& c) {
                           return c.data.augment_policy == AugmentPolicy::randaugment &&
                                  c.data.format != DataFormat::csv;
                         },
                         "data.augment_policy randaugment on images"};
  when(range(add(SETTING(data.augment_policy_ops), data, "RandAugment: operations", T::Int,
                 "Operations applied to each image in turn (num_ops; 2 by default)."),
             between(0, 14)),
       randaugment);
  when(range(add(SETTING(data.augment_policy_magnitude), data, "RandAugment: magnitude", T::Int,
                 "The bin of every operation's strength, 0 (none) to bins - 1 (torchvision's default 9 of 31)."),
             between(0, 99)),
       randaugment);
  when(range(add(SETTING(data.augment_policy_bins), data, "Policy: magnitude bins", T::Int,
                 "How many strengths each operation's range is divided into (num_magnitude_bins, 31)."),
             between(2, 100)),
       Rule{[](const TrainConfig& c) {
              return c.data.augment_policy != AugmentPolicy::none && c.data.format != DataFormat::csv;
            },
            "a data.augment_policy (not none) on images"});
  when(range(
           imagesOnly(add(SETTING(data.augment_erasing), data, "Random erasing", T::Real,
                          "RandomErasing: the probability that a rectangle of 2-33 % of a training image is set to the "
                          "channel mean (0 after normalisation); 0: off.")),
           between(0, 1)),
       images, true);

  const Rule classifying{[](const TrainConfig& c) { return c.task.kind == TaskKind::classification; },
                         "task.kind classification"};
  when(add(SETTING(data.augment_mixup), data, "MixUp", T::Bool,
           "MixUp: each training batch blended with itself shifted by one, images and one-hot targets alike, by a "
           "share drawn from Beta(alpha, alpha) (classification)."),
       classifying);
  when(range(add(SETTING(data.mixup_alpha), data, "MixUp alpha", T::Real,
                 "MixUp's Beta(alpha, alpha): 1 draws the share uniformly, small values keep images nearly whole "
                 "(torchvision: 1)."),
             above(0)),
       Rule{[](const TrainConfig& c) { return c.data.augment_mixup; }, "data.augment_mixup"}, true);
  when(
      imagesOnly(add(SETTING(data.augment_cutmix), data, "CutMix", T::Bool,
                     "CutMix: a rectangle of each training image replaced by the same rectangle of the next image, the "
                     "targets mixed by the areas (classification, images)."),
                 "cuts rectangles of images; data.format csv is a table (MixUp mixes rows)"),
      Rule{[](const TrainConfig& c) {
             return c.task.kind == TaskKind::classification && c.data.format != DataFormat::csv;
           },
           "task.kind classification on images"});
  when(range(add(SETTING(data.cutmix_alpha), data, "CutMix alpha", T::Real,
                 "CutMix's Beta(alpha, alpha) for the kept share of the image (torchvision: 1)."),
             above(0)),
       Rule{[](const TrainConfig& c) { return c.data.augment_cutmix; }, "data.augment_cutmix"}, true);
  when(range(add(SETTING(data.mix_switch_prob), data, "CutMix share when both", T::Real,
                 "With MixUp and CutMix both on, the probability that a batch gets CutMix rather than MixUp "
                 "(torchvision's RandomChoice of the two: 0.5)."),
             between(0, 1)),
       Rule{[](const TrainConfig& c) { return c.data.augment_mixup && c.data.augment_cutmix; },
            "data.augment_mixup and data.augment_cutmix together"},
       true);
}

}  // namespace studio::schema
