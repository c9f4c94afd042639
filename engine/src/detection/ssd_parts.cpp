#include "detection/ssd_parts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "detection/box_coder.h"
#include "detection/box_ops.h"

namespace studio::detection {

SsdOptions ssdliteDefaults() {
  SsdOptions o;
  o.aspectRatios.assign(6, {2.0, 3.0});
  o.minRatio = 0.2;
  o.maxRatio = 0.95;
  o.scoreThresh = 0.001;
  o.nms = 0.55;
  o.detectionsPerImage = 300;
  o.topkCandidates = 300;
  return o;
}

int64_t ssdAnchorsPerPlace(const SsdOptions& o) { return 2 + 2 * static_cast<int64_t>(o.aspectRatios.front().size()); }

torch::Tensor defaultBoxes(const SsdOptions& o, const std::vector<std::array<int64_t, 2>>& grids, int64_t imageH,
                           int64_t imageW, const torch::TensorOptions& options) {
  const size_t maps = o.aspectRatios.size();
  std::vector<double> scales;
  if (maps > 1) {
    for (size_t k = 0; k < maps; ++k)
      scales.push_back(o.minRatio +
                       (o.maxRatio - o.minRatio) * static_cast<double>(k) / (static_cast<double>(maps) - 1.0));
    scales.push_back(1.0);
  } else {
    scales = {o.minRatio, o.maxRatio};
  }
  // _grid_default_boxes: the centres in the maps' dtype, the sizes float32, their cat the promoted type.
  const auto dtype = options.dtype().toScalarType();
  const auto result = c10::promoteTypes(dtype, torch::kFloat);
  std::vector<torch::Tensor> all;
  for (size_t k = 0; k < grids.size(); ++k) {
    // _generate_wh_pairs in double, then float32.
    std::vector<double> wh{scales[k], scales[k], std::sqrt(scales[k] * scales[k + 1]),
                           std::sqrt(scales[k] * scales[k + 1])};
    for (const double ar : o.aspectRatios[k]) {
      const double w = scales[k] * std::sqrt(ar), h = scales[k] / std::sqrt(ar);
      wh.insert(wh.end(), {w, h, h, w});
    }
    torch::Tensor pairs = torch::tensor(wh, torch::kDouble).to(torch::kFloat).view({-1, 2}).to(result);
    const int64_t gh = grids[k][0], gw = grids[k][1];
    const torch::Tensor sx = ((torch::arange(0, gw) + 0.5) / static_cast<double>(gw)).to(dtype).to(result);
    const torch::Tensor sy = ((torch::arange(0, gh) + 0.5) / static_cast<double>(gh)).to(dtype).to(result);
    const std::vector<torch::Tensor> mesh = torch::meshgrid({sy, sx}, "ij");
    const torch::Tensor x = mesh[1].reshape(-1), y = mesh[0].reshape(-1);
    std::vector<torch::Tensor> xy;
    for (int64_t i = 0; i < pairs.size(0); ++i) xy.insert(xy.end(), {x, y});
    const torch::Tensor shifts = torch::stack(xy, -1).reshape({-1, 2});
    if (o.clip) pairs = pairs.clamp(0, 1);
    all.push_back(torch::cat({shifts, pairs.repeat({gh * gw, 1})}, 1));
  }
  const torch::Tensor boxes = torch::cat(all).to(options.device());
  const torch::Tensor size =
      torch::tensor({imageW, imageH}, torch::TensorOptions().dtype(torch::kLong).device(options.device()));
  const torch::Tensor centre = boxes.slice(1, 0, 2), half = 0.5 * boxes.slice(1, 2);
  return torch::cat({(centre - half) * size, (centre + half) * size}, -1);
}

torch::Tensor ssdMatch(const torch::Tensor& quality, double iou) {
  torch::Tensor matches = matchBoxes(quality, iou, iou, false);
  const torch::Tensor best = std::get<1>(quality.max(1));
  matches.index_put_({best},
                     torch::arange(best.size(0), torch::TensorOptions().dtype(torch::kLong).device(best.device())));
  return matches;
}

std::pair<torch::Tensor, torch::Tensor> ssdLosses(const SsdOptions& o, const torch::Tensor& logits,
                                                  const torch::Tensor& codes, const torch::Tensor& anchors,
                                                  const std::vector<torch::Tensor>& boxes,
                                                  const std::vector<torch::Tensor>& labels,
                                                  const std::vector<torch::Tensor>& matched) {
  const BoxCoder coder(o.coderWeights);
  std::vector<torch::Tensor> boxLoss, targets;
  int64_t foreground = 0;
  for (size_t i = 0; i < boxes.size(); ++i) {
    const auto image = static_cast<int64_t>(i);
    const torch::Tensor fg = torch::where(matched[i] >= 0)[0];
    const torch::Tensor which = matched[i].index({fg});
    foreground += which.numel();
    const torch::Tensor target = coder.encode(boxes[i].index({which}), anchors.index({fg}));
    boxLoss.push_back(torch::smooth_l1_loss(codes[image].index({fg}), target, at::Reduction::Sum));
    torch::Tensor classes = torch::zeros({logits.size(1)}, labels[i].options());
    classes.index_put_({fg}, labels[i].index({which}));
    targets.push_back(classes);
  }
  const torch::Tensor boxSum = torch::stack(boxLoss).sum();
  const torch::Tensor classTargets = torch::stack(targets);
  const int64_t k = logits.size(-1);
  const torch::Tensor loss =
      torch::cross_entropy_loss(logits.view({-1, k}), classTargets.view(-1), {}, at::Reduction::None)
          .view(classTargets.sizes());
  // Hard negative mining: each image's negatives with the highest losses, three per positive.
  const torch::Tensor fgMask = classTargets > 0;
  const torch::Tensor negatives = o.negToPos * fgMask.sum(1, true);
  torch::Tensor negativeLoss = loss.clone();
  negativeLoss.index_put_({fgMask}, -std::numeric_limits<float>::infinity());
  const torch::Tensor order = std::get<1>(negativeLoss.sort(1, true));
  const torch::Tensor bgMask = std::get<1>(order.sort(1)) < negatives;
  const auto n = static_cast<double>(std::max<int64_t>(1, foreground));
  return {boxSum / n, (loss.index({fgMask}).sum() + loss.index({bgMask}).sum()) / n};
}

std::vector<Detections> ssdDetections(const SsdOptions& o, const torch::Tensor& logits, const torch::Tensor& codes,
                                      const torch::Tensor& anchors, const std::vector<ImageSize>& sizes) {
  const BoxCoder coder(o.coderWeights);
  const torch::Tensor scores = torch::softmax(logits, -1);
  const int64_t classes = scores.size(-1);
  std::vector<Detections> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto image = static_cast<int64_t>(i);
    const torch::Tensor decoded =
        clipBoxesToImage(coder.decode(codes[image], anchors), sizes[i].height, sizes[i].width);
    std::vector<torch::Tensor> b, s, l;
    for (int64_t label = 1; label < classes; ++label) {
      torch::Tensor score = scores[image].select(1, label);
      const torch::Tensor keep = score > o.scoreThresh;
      score = score.index({keep});
      const torch::Tensor box = decoded.index({keep});
      auto [top, idx] = score.topk(std::min<int64_t>(score.size(0), o.topkCandidates));
      b.push_back(box.index({idx}));
      s.push_back(top);
      l.push_back(torch::full_like(top, label, torch::TensorOptions().dtype(torch::kLong)));
    }
    Detections d{torch::cat(b), torch::cat(s), torch::cat(l)};
    const torch::Tensor kept = batchedNms(d.boxes, d.scores, d.labels, o.nms).slice(0, 0, o.detectionsPerImage);
    out.push_back({d.boxes.index({kept}), d.scores.index({kept}), d.labels.index({kept})});
  }
  return out;
}

}  // namespace studio::detection
