#include "detection/box_coder.h"

#include <cmath>

namespace studio::detection {

using torch::indexing::Slice;

torch::Tensor boxIou(const torch::Tensor& a, const torch::Tensor& b) {
  // box_area, _box_inter_union and box_iou as torchvision writes them.
  const torch::Tensor area1 = (a.select(1, 2) - a.select(1, 0)) * (a.select(1, 3) - a.select(1, 1));
  const torch::Tensor area2 = (b.select(1, 2) - b.select(1, 0)) * (b.select(1, 3) - b.select(1, 1));
  const torch::Tensor lt =
      torch::max(a.index({Slice(), torch::indexing::None, Slice(0, 2)}), b.index({Slice(), Slice(0, 2)}));
  const torch::Tensor rb =
      torch::min(a.index({Slice(), torch::indexing::None, Slice(2, 4)}), b.index({Slice(), Slice(2, 4)}));
  const torch::Tensor wh = (rb - lt).clamp_min(0);
  const torch::Tensor inter = wh.select(2, 0) * wh.select(2, 1);
  const torch::Tensor unions = area1.unsqueeze(1) + area2.unsqueeze(0) - inter;
  return inter / unions;
}

torch::Tensor clipBoxesToImage(const torch::Tensor& boxes, int64_t height, int64_t width) {
  const int64_t dim = boxes.dim();
  torch::Tensor x = boxes.index({torch::indexing::Ellipsis, Slice(0, torch::indexing::None, 2)});
  torch::Tensor y = boxes.index({torch::indexing::Ellipsis, Slice(1, torch::indexing::None, 2)});
  x = x.clamp(0, width);
  y = y.clamp(0, height);
  return torch::stack({x, y}, dim).reshape(boxes.sizes());
}

torch::Tensor removeSmallBoxes(const torch::Tensor& boxes, double minSize) {
  const torch::Tensor ws = boxes.select(1, 2) - boxes.select(1, 0);
  const torch::Tensor hs = boxes.select(1, 3) - boxes.select(1, 1);
  return torch::where((ws >= minSize) & (hs >= minSize))[0];
}

torch::Tensor BoxCoder::encode(const torch::Tensor& matched, const torch::Tensor& proposals) const {
  const auto opts = matched.options();
  const torch::Tensor w = torch::tensor({m_weights[0], m_weights[1], m_weights[2], m_weights[3]}, opts);
  auto col = [](const torch::Tensor& t, int64_t i) { return t.select(1, i).unsqueeze(1); };
  const torch::Tensor exW = col(proposals, 2) - col(proposals, 0), exH = col(proposals, 3) - col(proposals, 1);
  const torch::Tensor exX = col(proposals, 0) + 0.5 * exW, exY = col(proposals, 1) + 0.5 * exH;
  const torch::Tensor gtW = col(matched, 2) - col(matched, 0), gtH = col(matched, 3) - col(matched, 1);
  const torch::Tensor gtX = col(matched, 0) + 0.5 * gtW, gtY = col(matched, 1) + 0.5 * gtH;
  const torch::Tensor dx = w[0] * (gtX - exX) / exW, dy = w[1] * (gtY - exY) / exH;
  const torch::Tensor dw = w[2] * torch::log(gtW / exW), dh = w[3] * torch::log(gtH / exH);
  return torch::cat({dx, dy, dw, dh}, 1);
}

torch::Tensor BoxCoder::decode(const torch::Tensor& codes, const torch::Tensor& reference) const {
  const torch::Tensor boxes = reference.to(codes.scalar_type());
  const torch::Tensor widths = boxes.select(1, 2) - boxes.select(1, 0);
  const torch::Tensor heights = boxes.select(1, 3) - boxes.select(1, 1);
  const torch::Tensor ctrX = boxes.select(1, 0) + 0.5 * widths, ctrY = boxes.select(1, 1) + 0.5 * heights;
  const double clip = std::log(1000.0 / 16);
  auto every4 = [&](int64_t i) { return codes.index({Slice(), Slice(i, torch::indexing::None, 4)}); };
  const torch::Tensor dx = every4(0) / m_weights[0], dy = every4(1) / m_weights[1];
  const torch::Tensor dw = (every4(2) / m_weights[2]).clamp_max(clip), dh = (every4(3) / m_weights[3]).clamp_max(clip);
  const torch::Tensor predX = dx * widths.unsqueeze(1) + ctrX.unsqueeze(1);
  const torch::Tensor predY = dy * heights.unsqueeze(1) + ctrY.unsqueeze(1);
  const torch::Tensor predW = torch::exp(dw) * widths.unsqueeze(1);
  const torch::Tensor predH = torch::exp(dh) * heights.unsqueeze(1);
  const torch::Tensor half = torch::tensor(0.5, codes.options());
  const torch::Tensor cH = half * predH, cW = half * predW;
  return torch::stack({predX - cW, predY - cH, predX + cW, predY + cH}, 2).flatten(1);
}

torch::Tensor matchBoxes(const torch::Tensor& quality, double high, double low, bool allowLowQuality) {
  auto [vals, matches] = quality.max(0);
  const torch::Tensor all = allowLowQuality ? matches.clone() : torch::Tensor();
  const torch::Tensor below = vals < low;
  const torch::Tensor between = (vals >= low) & (vals < high);
  matches.index_put_({below}, kBelowLow);
  matches.index_put_({between}, kBetween);
  if (allowLowQuality) {
    const torch::Tensor best = std::get<0>(quality.max(1));
    const torch::Tensor update = torch::where(quality == best.unsqueeze(1))[1];
    matches.index_put_({update}, all.index({update}));
  }
  return matches;
}

std::pair<torch::Tensor, torch::Tensor> sampleBalanced(const torch::Tensor& labels, int64_t batch,
                                                       double positiveFraction) {
  const torch::Tensor positive = torch::where(labels >= 1)[0];
  const torch::Tensor negative = torch::where(labels == 0)[0];
  const int64_t numPos = std::min<int64_t>(positive.numel(), static_cast<int64_t>(batch * positiveFraction));
  const int64_t numNeg = std::min<int64_t>(negative.numel(), batch - numPos);
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(labels.device());
  const torch::Tensor perm1 = torch::randperm(positive.numel(), longs).slice(0, 0, numPos);
  const torch::Tensor perm2 = torch::randperm(negative.numel(), longs).slice(0, 0, numNeg);
  torch::Tensor pos = torch::zeros_like(labels, torch::kByte), neg = torch::zeros_like(labels, torch::kByte);
  pos.index_put_({positive.index({perm1})}, 1);
  neg.index_put_({negative.index({perm2})}, 1);
  return {pos, neg};
}

}  // namespace studio::detection
