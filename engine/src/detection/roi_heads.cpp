#include "detection/roi_heads.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "detection/box_coder.h"
#include "detection/box_ops.h"
#include "nets/layers.h"

#include <torch/nn/modules/container/functional.h>

namespace studio::detection {

namespace nn = torch::nn;

namespace {

// _infer_scale: 2 ** round(log2(level height / image height)), the log in float32.
double inferScale(const torch::Tensor& feature, int64_t imageHeight) {
  const double approx = static_cast<double>(feature.size(-2)) / static_cast<double>(imageHeight);
  const double rounded = torch::tensor(approx, torch::kFloat).log2().round().item<double>();
  return std::pow(2.0, rounded);
}

}  // namespace

torch::Tensor multiScaleRoiAlign(const FeatureMaps& features, const std::vector<torch::Tensor>& boxes,
                                 const std::vector<ImageSize>& imageSizes, const RoiHeadsOptions& o) {
  std::vector<torch::Tensor> levels;
  for (const auto& [name, f] : features)
    if (std::find(o.featureNames.begin(), o.featureNames.end(), name) != o.featureNames.end()) levels.push_back(f);
  if (levels.empty()) throw std::invalid_argument("detection: no feature map to pool from");
  int64_t maxH = 0;
  for (const auto& s : imageSizes) maxH = std::max(maxH, s.height);
  std::vector<double> scales;
  for (const auto& f : levels) scales.push_back(inferScale(f, maxH));
  // _convert_to_roi_format: (image index, x1, y1, x2, y2).
  const torch::Tensor concat = torch::cat(boxes, 0);
  std::vector<torch::Tensor> ids;
  for (size_t i = 0; i < boxes.size(); ++i)
    ids.push_back(torch::full_like(boxes[i].slice(1, 0, 1), static_cast<double>(i)));
  const torch::Tensor rois = torch::cat({torch::cat(ids, 0), concat}, 1);
  const std::array<int64_t, 2> out{o.poolSize, o.poolSize};
  if (levels.size() == 1) return roiAlign(levels[0], rois, out, scales[0], o.samplingRatio, false);
  // LevelMapper: floor(4 + log2(sqrt(area) / 224) + eps), clamped to the levels there are.
  const auto kMin = static_cast<int64_t>(-std::log2(static_cast<float>(scales.front())));
  const auto kMax = static_cast<int64_t>(-std::log2(static_cast<float>(scales.back())));
  const torch::Tensor s =
      torch::sqrt((concat.select(1, 2) - concat.select(1, 0)) * (concat.select(1, 3) - concat.select(1, 1)));
  torch::Tensor target = torch::floor(4 + torch::log2(s / 224) + torch::tensor(1e-6, s.options()));
  target = torch::clamp(target, kMin, kMax);
  const torch::Tensor mapped = target.to(torch::kLong) - kMin;
  torch::Tensor result = torch::zeros({rois.size(0), levels[0].size(1), o.poolSize, o.poolSize}, levels[0].options());
  for (size_t l = 0; l < levels.size(); ++l) {
    const torch::Tensor idx = torch::where(mapped == static_cast<int64_t>(l))[0];
    const torch::Tensor pooled = roiAlign(levels[l], rois.index({idx}), out, scales[l], o.samplingRatio, false);
    result = result.index_put({idx}, pooled.to(result.scalar_type()));
  }
  return result;
}

TwoMlpHeadImpl::TwoMlpHeadImpl(int64_t in, int64_t representation) {
  fc6 = register_module("fc6", nn::Linear(in, representation));
  fc7 = register_module("fc7", nn::Linear(representation, representation));
}

torch::Tensor TwoMlpHeadImpl::forward(const torch::Tensor& x) {
  return torch::relu(fc7(torch::relu(fc6(x.flatten(1)))));
}

FastRcnnPredictorImpl::FastRcnnPredictorImpl(int64_t in, int64_t classes) {
  cls_score = register_module("cls_score", nn::Linear(in, classes));
  bbox_pred = register_module("bbox_pred", nn::Linear(in, classes * 4));
}

RoiHeadsImpl::RoiHeadsImpl(int64_t channels, int64_t classes, RoiHeadsOptions options) : m_o(std::move(options)) {
  if (m_o.convLayers.empty()) {
    TwoMlpHead mlp(channels * m_o.poolSize * m_o.poolSize, m_o.representation);
    box_head = register_module("box_head", mlp.ptr());
    m_boxHead = [mlp](const torch::Tensor& x) mutable { return mlp->forward(x); };
  } else {
    // FastRCNNConvFCHead(norm_layer=BatchNorm2d): "i" Conv2dNormActivation,
    // then Flatten, Linear, ReLU; its convs kaiming_normal_(fan_out, relu).
    tv::Seq head;
    const int64_t in = appendConvNormRelu(head, channels, m_o.convLayers);
    head->push_back(nn::Flatten());
    head->push_back(nn::Linear(in * m_o.poolSize * m_o.poolSize, m_o.representation));
    head->push_back(nn::Functional([](const torch::Tensor& x) { return torch::relu(x); }));
    initConvsFanOut(head);
    box_head = register_module("box_head", head.ptr());
    m_boxHead = [head](const torch::Tensor& x) mutable { return head->forward(x); };
  }
  box_predictor = register_module("box_predictor", FastRcnnPredictor(m_o.representation, classes));
  if (m_o.masks) {
    // MaskRCNN's mask_head, then MaskRCNNPredictor(256, 256, num_classes).
    tv::Seq head = maskRcnnHeads(channels, m_o.maskLayers);
    mask_head = register_module("mask_head", head.ptr());
    m_maskHead = [head](const torch::Tensor& x) mutable { return head->forward(x); };
    mask_predictor = register_module("mask_predictor", MaskRcnnPredictor(m_o.maskLayers.back(), 256, classes));
  }
}

torch::Tensor RoiHeadsImpl::maskLogits(const FeatureMaps& features, const std::vector<torch::Tensor>& boxes,
                                       const std::vector<ImageSize>& imageSizes) {
  RoiHeadsOptions pool = m_o;
  pool.poolSize = m_o.maskPoolSize;  // mask_roi_pool: MultiScaleRoIAlign(["0", "1", "2", "3"], 14, 2)
  return mask_predictor->forward(m_maskHead(multiScaleRoiAlign(features, boxes, imageSizes, pool)));
}

RoiHeadsResult RoiHeadsImpl::forward(const FeatureMaps& features, std::vector<torch::Tensor> proposals,
                                     const std::vector<ImageSize>& imageSizes,
                                     const std::vector<torch::Tensor>* gtBoxes,
                                     const std::vector<torch::Tensor>* gtLabels, bool training,
                                     const std::vector<torch::Tensor>* gtMasks) {
  const BoxCoder coder({10.0, 10.0, 5.0, 5.0});
  RoiHeadsResult result;
  std::vector<torch::Tensor> labels;
  torch::Tensor regressionTargets;         // training: the sampled proposals' offsets to their matches
  std::vector<torch::Tensor> matchedIdxs;  // training: each sampled proposal's ground truth
  if (training) {
    if (!gtBoxes || !gtLabels || gtBoxes->size() != proposals.size() || gtLabels->size() != proposals.size())
      throw std::invalid_argument("detection: training needs each image's boxes and labels");
    // select_training_samples: the ground truth joins the proposals, each
    // proposal is matched, then sampled.
    std::vector<torch::Tensor> matchedBoxes;
    for (size_t i = 0; i < proposals.size(); ++i) {
      const torch::Tensor gt = (*gtBoxes)[i].to(proposals[i].scalar_type());
      proposals[i] = torch::cat({proposals[i], gt});
      const auto longs = proposals[i].options().dtype(torch::kLong);
      if (gt.numel() == 0) {
        matchedIdxs.push_back(torch::zeros({proposals[i].size(0)}, longs));
        labels.push_back(torch::zeros({proposals[i].size(0)}, longs));
        continue;
      }
      const torch::Tensor matched = matchBoxes(boxIou(gt, proposals[i]), m_o.fgIou, m_o.bgIou, false);
      const torch::Tensor clamped = matched.clamp_min(0);
      torch::Tensor l = (*gtLabels)[i].index({clamped}).to(torch::kLong);
      l.index_put_({matched == kBelowLow}, 0);
      l.index_put_({matched == kBetween}, -1);
      matchedIdxs.push_back(clamped);
      labels.push_back(l);
    }
    for (size_t i = 0; i < proposals.size(); ++i) {
      auto [pos, neg] = sampleBalanced(labels[i], m_o.batchPerImage, m_o.positiveFraction);
      const torch::Tensor sampled = torch::where(pos.to(torch::kBool) | neg.to(torch::kBool))[0];
      proposals[i] = proposals[i].index({sampled});
      labels[i] = labels[i].index({sampled});
      matchedIdxs[i] = matchedIdxs[i].index({sampled});
      torch::Tensor gt = (*gtBoxes)[i].to(proposals[i].scalar_type());
      if (gt.numel() == 0) gt = torch::zeros({1, 4}, proposals[i].options());
      matchedBoxes.push_back(gt.index({matchedIdxs[i]}));
    }
    regressionTargets = coder.encode(torch::cat(matchedBoxes), torch::cat(proposals));
  }
  const torch::Tensor pooled = multiScaleRoiAlign(features, proposals, imageSizes, m_o);
  const torch::Tensor x = m_boxHead(pooled);
  const torch::Tensor classLogits = box_predictor->cls_score(x), boxRegression = box_predictor->bbox_pred(x);
  if (training) {
    // fastrcnn_loss
    const torch::Tensor all = torch::cat(labels);
    result.lossClassifier = torch::cross_entropy_loss(classLogits, all);
    const torch::Tensor pos = torch::where(all > 0)[0];
    const int64_t n = classLogits.size(0);
    const torch::Tensor perClass = boxRegression.reshape({n, boxRegression.size(-1) / 4, 4});
    result.lossBoxReg = torch::smooth_l1_loss(perClass.index({pos, all.index({pos})}), regressionTargets.index({pos}),
                                              at::Reduction::Sum, 1.0 / 9) /
                        static_cast<double>(all.numel());
    if (m_o.masks) {
      // The positive proposals of each image with their matches, as torchvision's roi_heads takes them.
      if (!gtMasks || gtMasks->size() != proposals.size())
        throw std::invalid_argument("detection: Mask R-CNN's training needs each image's masks");
      std::vector<torch::Tensor> positive, positiveMatched;
      for (size_t i = 0; i < proposals.size(); ++i) {
        const torch::Tensor p = torch::where(labels[i] > 0)[0];
        positive.push_back(proposals[i].index({p}));
        positiveMatched.push_back(matchedIdxs[i].index({p}));
      }
      result.lossMask =
          maskRcnnLoss(maskLogits(features, positive, imageSizes), positive, *gtMasks, *gtLabels, positiveMatched);
    }
    return result;
  }
  // postprocess_detections
  const int64_t classes = classLogits.size(-1);
  std::vector<int64_t> perImage;
  for (const auto& p : proposals) perImage.push_back(p.size(0));
  const torch::Tensor proposed = torch::cat(proposals);
  // The sizes spelt out: an evaluation whose RPN kept no proposal (the
  // _320_ model's score threshold) has none to infer a -1 from.
  const torch::Tensor predBoxes = coder.decode(boxRegression, proposed).reshape({proposed.size(0), classes, 4});
  const torch::Tensor predScores = torch::softmax(classLogits, -1);
  const std::vector<torch::Tensor> boxesList = predBoxes.split_with_sizes(perImage, 0);
  const std::vector<torch::Tensor> scoresList = predScores.split_with_sizes(perImage, 0);
  for (size_t i = 0; i < boxesList.size(); ++i) {
    torch::Tensor boxes = clipBoxesToImage(boxesList[i], imageSizes[i].height, imageSizes[i].width);
    torch::Tensor scores = scoresList[i];
    torch::Tensor labelsHere =
        torch::arange(classes, scores.options().dtype(torch::kLong)).view({1, -1}).expand_as(scores);
    const int64_t kept = boxes.size(0) * (classes - 1);
    boxes = boxes.slice(1, 1).reshape({kept, 4});
    scores = scores.slice(1, 1).reshape({kept});
    labelsHere = labelsHere.slice(1, 1).reshape({kept});
    torch::Tensor keep = torch::where(scores > m_o.scoreThresh)[0];
    boxes = boxes.index({keep}), scores = scores.index({keep}), labelsHere = labelsHere.index({keep});
    keep = removeSmallBoxes(boxes, 1e-2);
    boxes = boxes.index({keep}), scores = scores.index({keep}), labelsHere = labelsHere.index({keep});
    keep = batchedNms(boxes, scores, labelsHere, m_o.nms).slice(0, 0, m_o.detectionsPerImage);
    result.detections.push_back({boxes.index({keep}), scores.index({keep}), labelsHere.index({keep}), {}});
  }
  if (m_o.masks) {
    std::vector<torch::Tensor> boxes, labels;
    int64_t found = 0;
    for (const auto& d : result.detections) {
      boxes.push_back(d.boxes);
      labels.push_back(d.labels);
      found += d.boxes.size(0);
    }
    const int64_t m = 2 * m_o.maskPoolSize;
    const std::vector<torch::Tensor> probabilities =
        found == 0 ? std::vector<torch::Tensor>(boxes.size(), torch::zeros({0, 1, m, m}, proposed.options()))
                   : maskProbabilities(maskLogits(features, boxes, imageSizes), labels);
    for (size_t i = 0; i < result.detections.size(); ++i) result.detections[i].masks = probabilities[i];
  }
  return result;
}

}  // namespace studio::detection
