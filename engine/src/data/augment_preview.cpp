#include "studio/augment_preview.h"

#include <torch/nn/functional/upsampling.h>

#include "data/augment.h"
#include "data/batch_loader.h"
#include "studio/data_split.h"

namespace studio {

std::vector<std::vector<Image>> previewAugmentations(const TrainConfig& config, const std::vector<Image>& images,
                                                     int64_t height, int64_t width, int draws) {
  namespace F = torch::nn::functional;
  torch::NoGradGuard noGrad;
  std::vector<std::vector<Image>> out;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image& img = images[i];
    out.emplace_back();
    if (img.pixels.empty() || img.height <= 0 || img.width <= 0) continue;
    const int64_t c = img.channels;
    torch::Tensor x = torch::from_blob(const_cast<uint8_t*>(img.pixels.data()), {1, img.height, img.width, c},
                                       torch::kUInt8)
                          .permute({0, 3, 1, 2})
                          .to(torch::kFloat32);
    if (img.height != height || img.width != width)
      x = F::interpolate(x, F::InterpolateFuncOptions()
                                .size(std::vector<int64_t>{height, width})
                                .mode(torch::kBilinear)
                                .align_corners(false)
                                .antialias(true));
    x = x.round().clamp(0, 255).to(torch::kUInt8).expand({draws, c, height, width}).contiguous();
    LoaderOptions o;
    o.augmentFlip = config.data.augment_flip;
    o.augmentCrop = config.data.augment_crop;
    o.photo = photoAugment(config.data);
    o.norm = Normalization::make(true, std::vector<double>(static_cast<size_t>(c), 0.0),
                                 std::vector<double>(static_cast<size_t>(c), 1.0), torch::Device(torch::kCPU));
    const torch::Tensor y = transformBatch(x, o, mixSeed(config.train.seed, i), /*augment=*/true)
                                .mul(255.0)
                                .round()
                                .clamp(0, 255)
                                .to(torch::kUInt8)
                                .permute({0, 2, 3, 1})
                                .contiguous();
    for (int k = 0; k < draws; ++k) {
      Image a;
      a.height = height;
      a.width = width;
      a.channels = c;
      const uint8_t* p = y[k].data_ptr<uint8_t>();
      a.pixels.assign(p, p + height * width * c);
      out.back().push_back(std::move(a));
    }
  }
  return out;
}

}  // namespace studio
