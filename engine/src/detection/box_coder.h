#pragma once
// The box arithmetic torchvision's detectors share
// (torchvision/models/detection/_utils.py, torchvision/ops/boxes.py): the
// box coder, the matcher, the balanced sampler, IoU, clipping and the small
// box filter, each computing what torchvision's computes, in the same order
// of operations, so float results agree to the last bit where the operators
// are the same. Boxes are (x1, y1, x2, y2). Thread: any.

#include <array>
#include <vector>

#include "torch_pch.h"

namespace studio::detection {

// box_iou: (N x M) IoU of boxes a (N x 4) against b (M x 4).
torch::Tensor boxIou(const torch::Tensor& a, const torch::Tensor& b);
// clip_boxes_to_image: x in [0, width], y in [0, height]; boxes (..., 4).
torch::Tensor clipBoxesToImage(const torch::Tensor& boxes, int64_t height, int64_t width);
// remove_small_boxes: the indices of the boxes at least minSize wide and high.
torch::Tensor removeSmallBoxes(const torch::Tensor& boxes, double minSize);

// BoxCoder: boxes as offsets (dx, dy, dw, dh) from reference boxes, each
// scaled by its weight; decoding clamps dw and dh at log(1000 / 16).
class BoxCoder {
 public:
  explicit BoxCoder(std::array<double, 4> weights) : m_weights(weights) {}
  // encode_single(matched, proposals): the offsets that take proposals to matched.
  torch::Tensor encode(const torch::Tensor& matched, const torch::Tensor& proposals) const;
  // decode_single(codes (N x 4k), boxes (N x 4)): N x 4k boxes.
  torch::Tensor decode(const torch::Tensor& codes, const torch::Tensor& boxes) const;

 private:
  std::array<double, 4> m_weights;
};

// Matcher: for each prediction (a column of quality, G x P), the index of
// its best ground-truth box, or kBelowLow (below low) / kBetween (between
// low and high). With allowLowQuality, the predictions that are some
// ground-truth box's best match keep it whatever its quality.
constexpr int64_t kBelowLow = -1;
constexpr int64_t kBetween = -2;
torch::Tensor matchBoxes(const torch::Tensor& quality, double high, double low, bool allowLowQuality);

// BalancedPositiveNegativeSampler for one image: labels >= 1 positive, 0
// negative (-1 neither); at most batch * positiveFraction positives, the
// rest negatives, each chosen by torch.randperm on the default generator in
// torchvision's order (positives, then negatives). Returns the two masks
// (uint8) as torchvision's sampler does.
std::pair<torch::Tensor, torch::Tensor> sampleBalanced(const torch::Tensor& labels, int64_t batch,
                                                       double positiveFraction);

}  // namespace studio::detection
