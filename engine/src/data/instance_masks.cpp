#include "data/instance_masks.h"

#include "data/box_augment.h"

#include <stdexcept>
#include <utility>

namespace studio::detection {

TrainingMasks::TrainingMasks(std::shared_ptr<const BoxAnnotations> a) : m_a(std::move(a)) {
  if (!m_a || m_a->masks.size() != m_a->boxes.size())
    throw std::logic_error("task.kind instance_segmentation needs a mask per box (read with masks)");
  m_boxesOf.resize(m_a->images.size());
  for (size_t i = 0; i < m_a->boxes.size(); ++i)
    if (!m_a->boxes[i].crowd) m_boxesOf[static_cast<size_t>(m_a->boxes[i].image)].push_back(i);
}

torch::Tensor TrainingMasks::of(int64_t item, int64_t height, int64_t width) const {
  const AnnotatedImage& image = m_a->images.at(static_cast<size_t>(item));
  const std::vector<size_t>& boxes = m_boxesOf[static_cast<size_t>(item)];
  torch::Tensor masks = torch::empty({static_cast<int64_t>(boxes.size()), image.height, image.width}, torch::kUInt8);
  for (size_t k = 0; k < boxes.size(); ++k) {
    const std::vector<uint8_t> pixels = rleDecode(m_a->masks[boxes[k]]);
    std::copy(pixels.begin(), pixels.end(), masks[static_cast<int64_t>(k)].data_ptr<uint8_t>());
  }
  return height == image.height && width == image.width ? masks : resizeMasks(masks, height, width);
}

std::vector<Rle> detectedMasks(const torch::Tensor& probabilities, int64_t height, int64_t width) {
  std::vector<Rle> out;
  if (!probabilities.defined() || probabilities.size(0) == 0) return out;
  torch::Tensor p = probabilities.to(torch::kCPU, torch::kFloat32);
  if (p.size(-2) != height || p.size(-1) != width) {
    p = at::upsample_bilinear2d(p, {height, width}, /*align_corners=*/false);
  }
  const torch::Tensor binary = (p.select(1, 0) > 0.5).to(torch::kUInt8).contiguous();
  for (int64_t k = 0; k < binary.size(0); ++k) out.push_back(rleEncode(binary[k].data_ptr<uint8_t>(), height, width));
  return out;
}

}  // namespace studio::detection
