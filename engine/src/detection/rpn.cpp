#include "detection/rpn.h"

#include <algorithm>
#include <stdexcept>

#include <torch/nn/init.h>
#include <torch/nn/modules/container/functional.h>

#include "detection/box_coder.h"
#include "detection/box_ops.h"
#include "nets/layers.h"

namespace studio::detection {

namespace nn = torch::nn;

torch::Tensor cellAnchors(const std::vector<double>& sizes, const std::vector<double>& ratios,
                          const torch::TensorOptions& options) {
  // generate_anchors in float32, then moved to the features' type.
  const auto f = torch::TensorOptions().dtype(torch::kFloat);
  const torch::Tensor scales = torch::tensor(sizes, f), aspect = torch::tensor(ratios, f);
  const torch::Tensor hRatios = torch::sqrt(aspect), wRatios = 1 / hRatios;
  const torch::Tensor ws = (wRatios.unsqueeze(1) * scales.unsqueeze(0)).view(-1);
  const torch::Tensor hs = (hRatios.unsqueeze(1) * scales.unsqueeze(0)).view(-1);
  return (torch::stack({-ws, -hs, ws, hs}, 1) / 2).round().to(options);
}

torch::Tensor gridAnchors(const ImageBatch& images, const std::vector<torch::Tensor>& features, const RpnOptions& o) {
  if (o.anchorSizes.size() != features.size())
    throw std::invalid_argument("detection: " + std::to_string(o.anchorSizes.size()) + " anchor levels for " +
                                std::to_string(features.size()) + " feature maps");
  const int64_t imageH = images.tensors.size(-2), imageW = images.tensors.size(-1);
  std::vector<torch::Tensor> all;
  for (size_t l = 0; l < features.size(); ++l) {
    const auto opts = features[l].options();
    const int64_t gh = features[l].size(-2), gw = features[l].size(-1);
    const int64_t strideH = imageH / gh, strideW = imageW / gw;
    const torch::Tensor base = cellAnchors(o.anchorSizes[l], o.aspectRatios[l], opts);
    const auto ints = torch::TensorOptions().dtype(torch::kInt).device(opts.device());
    const torch::Tensor shiftsX = torch::arange(0, gw, ints).to(torch::kLong) * strideW;
    const torch::Tensor shiftsY = torch::arange(0, gh, ints).to(torch::kLong) * strideH;
    const std::vector<torch::Tensor> mesh = torch::meshgrid({shiftsY, shiftsX}, "ij");
    const torch::Tensor sx = mesh[1].reshape(-1), sy = mesh[0].reshape(-1);
    const torch::Tensor shifts = torch::stack({sx, sy, sx, sy}, 1);
    all.push_back((shifts.view({-1, 1, 4}) + base.view({1, -1, 4})).reshape({-1, 4}));
  }
  return torch::cat(all);
}

RpnHeadImpl::RpnHeadImpl(int64_t channels, int64_t anchors, int64_t depth) {
  nn::Sequential convs;
  for (int64_t i = 0; i < depth; ++i) {
    tv::Seq block;  // Conv2dNormActivation without a norm: the conv keeps its bias
    block->push_back(nn::Conv2d(nn::Conv2dOptions(channels, channels, 3).padding(1)));
    block->push_back(nn::Functional([](const torch::Tensor& x) { return torch::relu(x); }));
    convs->push_back(block);
  }
  conv = register_module("conv", convs);
  cls_logits = register_module("cls_logits", nn::Conv2d(nn::Conv2dOptions(channels, anchors, 1)));
  bbox_pred = register_module("bbox_pred", nn::Conv2d(nn::Conv2dOptions(channels, anchors * 4, 1)));
  torch::NoGradGuard noGrad;
  for (const auto& m : modules(/*include_self=*/false))
    if (auto* c = m->as<nn::Conv2d>()) {
      nn::init::normal_(c->weight, 0, 0.01);
      nn::init::zeros_(c->bias);
    }
}

RpnImpl::RpnImpl(int64_t channels, RpnOptions options) : m_o(std::move(options)) {
  const int64_t anchors = static_cast<int64_t>(m_o.anchorSizes.front().size() * m_o.aspectRatios.front().size());
  head = register_module("head", RpnHead(channels, anchors, m_o.convDepth));
}

torch::Tensor flattenLevel(const torch::Tensor& t, int64_t c) {
  const int64_t n = t.size(0), h = t.size(2), w = t.size(3);
  return t.view({n, -1, c, h, w}).permute({0, 3, 4, 1, 2}).reshape({n, -1, c});
}

RpnResult RpnImpl::forward(const ImageBatch& images, const FeatureMaps& named,
                           const std::vector<torch::Tensor>* targets, bool training) {
  std::vector<torch::Tensor> features;
  for (const auto& [name, f] : named) features.push_back(f);
  const int64_t numImages = images.tensors.size(0);
  std::vector<torch::Tensor> objectnessLevels, deltaLevels;
  std::vector<int64_t> perLevel;
  for (const auto& f : features) {
    const torch::Tensor t = head->conv->forward(f);
    const torch::Tensor logits = head->cls_logits(t), deltas = head->bbox_pred(t);
    perLevel.push_back(logits.size(1) * logits.size(2) * logits.size(3));
    objectnessLevels.push_back(flattenLevel(logits, 1));
    deltaLevels.push_back(flattenLevel(deltas, 4));
  }
  const torch::Tensor objectness = torch::cat(objectnessLevels, 1).flatten(0, -2);  // N*T x 1
  const torch::Tensor deltas = torch::cat(deltaLevels, 1).reshape({-1, 4});         // N*T x 4
  const torch::Tensor anchorsOne = gridAnchors(images, features, m_o);              // T x 4
  const torch::Tensor anchors = anchorsOne.repeat({numImages, 1});                  // N*T x 4
  const BoxCoder coder({1.0, 1.0, 1.0, 1.0});
  const torch::Tensor proposals = coder.decode(deltas.detach(), anchors).view({numImages, -1, 4});

  // filter_proposals
  RpnResult result;
  const torch::Tensor scoresAll = objectness.detach().reshape({numImages, -1});
  std::vector<torch::Tensor> levelIds;
  for (size_t l = 0; l < perLevel.size(); ++l)
    levelIds.push_back(torch::full({perLevel[l]}, static_cast<int64_t>(l), scoresAll.options().dtype(torch::kLong)));
  const torch::Tensor levels = torch::cat(levelIds).reshape({1, -1}).expand_as(scoresAll);
  const int64_t preNms = training ? m_o.preNmsTrain : m_o.preNmsTest;
  const int64_t postNms = training ? m_o.postNmsTrain : m_o.postNmsTest;
  std::vector<torch::Tensor> top;
  int64_t offset = 0;
  for (const torch::Tensor& ob : scoresAll.split_with_sizes(perLevel, 1)) {
    const int64_t k = std::min(preNms, ob.size(1));
    top.push_back(std::get<1>(ob.topk(k, 1)) + offset);
    offset += ob.size(1);
  }
  const torch::Tensor topIdx = torch::cat(top, 1);
  const torch::Tensor batchIdx = torch::arange(numImages, topIdx.options()).unsqueeze(1);
  const torch::Tensor topScores = torch::sigmoid(scoresAll.index({batchIdx, topIdx}));
  const torch::Tensor topLevels = levels.index({batchIdx, topIdx});
  const torch::Tensor topBoxes = proposals.index({batchIdx, topIdx});
  for (int64_t i = 0; i < numImages; ++i) {
    const ImageSize size = images.sizes[static_cast<size_t>(i)];
    torch::Tensor boxes = clipBoxesToImage(topBoxes[i], size.height, size.width);
    torch::Tensor scores = topScores[i], lvl = topLevels[i];
    torch::Tensor keep = removeSmallBoxes(boxes, 1e-3);
    boxes = boxes.index({keep}), scores = scores.index({keep}), lvl = lvl.index({keep});
    keep = torch::where(scores >= m_o.scoreThresh)[0];
    boxes = boxes.index({keep}), scores = scores.index({keep}), lvl = lvl.index({keep});
    keep = batchedNms(boxes, scores, lvl, m_o.nms).slice(0, 0, postNms);
    result.proposals.push_back(boxes.index({keep}));
  }
  if (!training) return result;
  if (!targets || static_cast<int64_t>(targets->size()) != numImages)
    throw std::invalid_argument("detection: training needs each image's boxes");

  // assign_targets_to_anchors, then compute_loss
  std::vector<torch::Tensor> labels, matchedBoxes, posMasks, negMasks;
  for (int64_t i = 0; i < numImages; ++i) {
    const torch::Tensor& gt = (*targets)[static_cast<size_t>(i)];
    if (gt.numel() == 0) {
      matchedBoxes.push_back(torch::zeros(anchorsOne.sizes(), anchorsOne.options().dtype(torch::kFloat)));
      labels.push_back(torch::zeros({anchorsOne.size(0)}, anchorsOne.options().dtype(torch::kFloat)));
      continue;
    }
    const torch::Tensor matched = matchBoxes(boxIou(gt, anchorsOne), m_o.fgIou, m_o.bgIou, true);
    matchedBoxes.push_back(gt.index({matched.clamp_min(0)}));
    torch::Tensor l = (matched >= 0).to(torch::kFloat);
    l.index_put_({matched == kBelowLow}, 0.0);
    l.index_put_({matched == kBetween}, -1.0);
    labels.push_back(l);
  }
  const torch::Tensor regressionTargets = coder.encode(torch::cat(matchedBoxes), anchors);
  for (const auto& l : labels) {
    auto [pos, neg] = sampleBalanced(l, m_o.batchPerImage, m_o.positiveFraction);
    posMasks.push_back(pos);
    negMasks.push_back(neg);
  }
  const torch::Tensor sampledPos = torch::where(torch::cat(posMasks))[0];
  const torch::Tensor sampledNeg = torch::where(torch::cat(negMasks))[0];
  const torch::Tensor sampled = torch::cat({sampledPos, sampledNeg});
  const torch::Tensor allLabels = torch::cat(labels);
  result.lossBoxReg = torch::smooth_l1_loss(deltas.index({sampledPos}), regressionTargets.index({sampledPos}),
                                            at::Reduction::Sum, 1.0 / 9) /
                      static_cast<double>(sampled.numel());
  result.lossObjectness =
      torch::binary_cross_entropy_with_logits(objectness.flatten().index({sampled}), allLabels.index({sampled}));
  return result;
}

}  // namespace studio::detection
