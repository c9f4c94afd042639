#include "studio/augment_preview.h"

#include <tuple>
#include <utility>

#include "data/augment.h"
#include "data/batch_loader.h"
#include "data/decoded_images.h"
#include "studio/data_split.h"
#include "studio/dataset_info.h"

namespace studio {

std::vector<std::vector<Image>> previewAugmentations(const TrainConfig& config, const std::vector<Image>& images,
                                                     int64_t height, int64_t width, int draws) {
  torch::NoGradGuard noGrad;
  // The images as the run stores them (data.stored_size), the input cut from them.
  const StoredShape stored = storedShapeOf(InputShape{images.empty() ? 3 : images.front().channels, height, width, 0},
                                           config.data, config.model.kind);
  std::vector<std::vector<Image>> out;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image& img = images[i];
    out.emplace_back();
    if (img.pixels.empty() || img.height <= 0 || img.width <= 0) continue;
    const int64_t c = img.channels;
    const torch::Tensor x = fitImage(img, ImageFit{stored.height, stored.width, stored.cover})
                                .unsqueeze(0)
                                .expand({draws, c, stored.height, stored.width})
                                .contiguous();
    LoaderOptions o;
    o.augmentFlip = config.data.augment_flip;
    o.augmentCrop = config.data.augment_crop;
    o.photo = photoAugment(config.data);
    o.policy = autoAugment(config.data);
    if (stored.larger(InputShape{c, height, width, 0})) std::tie(o.cropHeight, o.cropWidth) = std::pair(height, width);
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
