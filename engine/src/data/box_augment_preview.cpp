// previewBoxAugmentations (studio/augment_preview.h): the training step's box
// augmentations (data/box_augment.h) on a few images, for the Data tab.
#include <ATen/CPUGeneratorImpl.h>

#include "data/box_augment.h"
#include "studio/augment_preview.h"
#include "studio/data_split.h"

namespace studio {

std::vector<std::vector<BoxedPreview>> previewBoxAugmentations(const TrainConfig& config,
                                                               const std::vector<BoxedPreview>& images, int draws) {
  torch::NoGradGuard noGrad;
  const detection::BoxAugment augment = detection::boxAugmentOf(config.data);
  std::vector<std::vector<BoxedPreview>> out;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image& img = images[i].image;
    out.emplace_back();
    if (img.pixels.empty() || img.channels != 3) continue;
    // HWC uint8 -> CHW float in [0, 1], as the loaders give a detector its images.
    const torch::Tensor pixels =
        torch::from_blob(const_cast<uint8_t*>(img.pixels.data()), {img.height, img.width, 3}, torch::kUInt8)
            .permute({2, 0, 1})
            .to(torch::kFloat32)
            .div(255);
    std::vector<float> corners;
    for (const auto& b : images[i].boxes)
      corners.insert(corners.end(), {static_cast<float>(b[0]), static_cast<float>(b[1]),
                                     static_cast<float>(b[0] + b[2]), static_cast<float>(b[1] + b[3])});
    const auto n = static_cast<int64_t>(images[i].boxes.size());
    const detection::BoxedImage original{pixels, torch::tensor(corners, torch::kFloat32).view({n, 4}),
                                         torch::tensor(images[i].labels, torch::kInt64)};
    for (int k = 0; k < draws; ++k) {
      at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(mixSeed(mixSeed(config.train.seed, i), k));
      const detection::BoxedImage a = detection::augmentBoxed(original, augment, gen);
      const torch::Tensor hwc =
          a.image.mul(255).round().clamp(0, 255).to(torch::kUInt8).permute({1, 2, 0}).contiguous();
      BoxedPreview p;
      p.image.height = hwc.size(0);
      p.image.width = hwc.size(1);
      p.image.channels = 3;
      p.image.pixels.assign(hwc.data_ptr<uint8_t>(), hwc.data_ptr<uint8_t>() + hwc.numel());
      const torch::Tensor boxes = a.boxes.to(torch::kFloat64).contiguous();
      const torch::Tensor labels = a.labels.contiguous();
      for (int64_t j = 0; j < boxes.size(0); ++j) {
        const double* b = boxes.data_ptr<double>() + 4 * j;
        p.boxes.push_back({b[0], b[1], b[2] - b[0], b[3] - b[1]});
        p.labels.push_back(labels.data_ptr<int64_t>()[j]);
      }
      out.back().push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace studio
