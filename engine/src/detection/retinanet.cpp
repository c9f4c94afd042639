#include "detection/retinanet.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <torch/nn/init.h>
#include <torch/nn/modules/normalization.h>

#include "detection/box_coder.h"
#include "detection/box_ops.h"
#include "detection/retina_losses.h"
#include "nets/layers.h"

namespace studio::detection {

namespace nn = torch::nn;

namespace {

// The anchor generator's options (rpn.h's gridAnchors reads only the sizes and ratios).
RpnOptions anchorsOf(const RetinaOptions& o) {
  RpnOptions a;
  a.anchorSizes = o.anchorSizes;
  a.aspectRatios = o.aspectRatios;
  return a;
}

// The sum of the images' losses in their order (retinanet.py's _sum).
torch::Tensor sumInOrder(const std::vector<torch::Tensor>& each) {
  torch::Tensor sum = each.front();
  for (size_t i = 1; i < each.size(); ++i) sum = sum + each[i];
  return sum;
}

}  // namespace

int64_t anchorsPerPlace(const RetinaOptions& o) {
  return static_cast<int64_t>(o.anchorSizes.front().size() * o.aspectRatios.front().size());
}

RetinaSubheadImpl::RetinaSubheadImpl(int64_t channels, int64_t anchors, int64_t classes)
    : m_width(classes > 0 ? classes : 4) {
  // Conv2dNormActivation(channels, channels, norm_layer=GroupNorm(32)): the
  // conv without a bias, normal(0, 0.01).
  conv = register_module("conv", nn::Sequential());
  for (int i = 0; i < 4; ++i) {
    tv::Seq block;
    block->push_back(nn::Conv2d(nn::Conv2dOptions(channels, channels, 3).padding(1).bias(false)));
    block->push_back(nn::GroupNorm(nn::GroupNormOptions(32, channels)));
    block->push_back(nn::ReLU());
    conv->push_back(block);
  }
  out = register_module(classes > 0 ? "cls_logits" : "bbox_reg",
                        nn::Conv2d(nn::Conv2dOptions(channels, anchors * m_width, 3).padding(1)));
  torch::NoGradGuard noGrad;
  for (const auto& m : conv->modules(/*include_self=*/false))
    if (auto* c = m->as<nn::Conv2d>()) nn::init::normal_(c->weight, 0, 0.01);
  nn::init::normal_(out->weight, 0, 0.01);
  // The classes' prior probability 0.01 (the focal loss paper's), zero for the offsets.
  nn::init::constant_(out->bias, classes > 0 ? -std::log((1 - 0.01) / 0.01) : 0.0);
}

torch::Tensor RetinaSubheadImpl::forward(const std::vector<torch::Tensor>& levels) {
  std::vector<torch::Tensor> all;
  for (const auto& features : levels) all.push_back(flattenLevel(out->forward(conv->forward(features)), m_width));
  return torch::cat(all, 1);
}

RetinaNetImpl::RetinaNetImpl(DetectorOptions options)
    : DetectorNetImpl(std::move(options)), m_transform(m_o.transform) {
  backbone =
      register_module("backbone", Backbone(m_o.kind, m_o.pretrained, m_o.frozenNormOn(), m_o.trainableBackboneLayers));
  head = register_module("head", std::make_shared<nn::Module>());
  const int64_t anchors = anchorsPerPlace(m_o.retina);
  classification = head->register_module("classification_head", RetinaSubhead(256, anchors, m_o.classes));
  regression = head->register_module("regression_head", RetinaSubhead(256, anchors, 0));
}

RetinaNetImpl::Outputs RetinaNetImpl::run(const ImageBatch& batch) {
  Outputs o;
  for (auto& [name, f] : backbone->forward(batch.tensors)) o.levels.push_back(f);
  o.logits = classification->forward(o.levels);
  o.codes = regression->forward(o.levels);
  o.anchors = gridAnchors(batch, o.levels, anchorsOf(m_o.retina));
  return o;
}

std::vector<Detections> RetinaNetImpl::detect(const std::vector<torch::Tensor>& images) {
  const RetinaOptions& r = m_o.retina;
  std::vector<ImageSize> original;
  for (const auto& image : images) original.push_back({image.size(-2), image.size(-1)});
  const ImageBatch batch = m_transform(images, nullptr, false);
  const auto [levels, logits, codes, anchors] = run(batch);
  const int64_t classes = logits.size(-1);
  const BoxCoder coder({1.0, 1.0, 1.0, 1.0});
  std::vector<Detections> out;
  for (size_t i = 0; i < images.size(); ++i) {
    const int64_t image = static_cast<int64_t>(i);
    std::vector<torch::Tensor> boxes, scores, labels;
    int64_t start = 0;
    for (const auto& level : levels) {
      const int64_t n = level.size(-2) * level.size(-1) * anchorsPerPlace(r);
      const torch::Tensor anchorsHere = anchors.narrow(0, start, n);
      torch::Tensor s = torch::sigmoid(logits[image].narrow(0, start, n)).flatten();
      const torch::Tensor codesHere = codes[image].narrow(0, start, n);
      start += n;
      const torch::Tensor keep = s > r.scoreThresh;
      s = s.index({keep});
      torch::Tensor idx = torch::where(keep)[0];
      auto [top, order] = s.topk(std::min<int64_t>(idx.size(0), r.topkCandidates));
      idx = idx.index({order});
      const torch::Tensor anchor = torch::div(idx, classes, "floor");
      const torch::Tensor decoded = coder.decode(codesHere.index({anchor}), anchorsHere.index({anchor}));
      boxes.push_back(clipBoxesToImage(decoded, batch.sizes[i].height, batch.sizes[i].width));
      scores.push_back(top);
      labels.push_back(torch::remainder(idx, classes));
    }
    Detections d{torch::cat(boxes), torch::cat(scores), torch::cat(labels)};
    const torch::Tensor kept = batchedNms(d.boxes, d.scores, d.labels, r.nms).slice(0, 0, r.detectionsPerImage);
    // Label 0 is the background no box has: torchvision returns it, the studio leaves it out.
    const torch::Tensor shown = kept.index({d.labels.index({kept}) > 0});
    d = {RcnnTransform::resizeBoxes(d.boxes.index({shown}), batch.sizes[i], original[i]), d.scores.index({shown}),
         d.labels.index({shown})};
    out.push_back(std::move(d));
  }
  return out;
}

DetectionLosses RetinaNetImpl::losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                      const std::vector<torch::Tensor>& labels) {
  if (boxes.size() != images.size() || labels.size() != images.size())
    throw std::invalid_argument("detection: each image needs its boxes and labels");
  const RetinaOptions& r = m_o.retina;
  const ImageBatch batch = m_transform(images, &boxes, true);
  checkPositiveBoxes(boxes);
  const auto [levels, logits, codes, anchors] = run(batch);
  const BoxCoder coder({1.0, 1.0, 1.0, 1.0});
  std::vector<torch::Tensor> classLoss, boxLoss;
  for (size_t i = 0; i < images.size(); ++i) {
    const int64_t image = static_cast<int64_t>(i);
    const torch::Tensor matched = boxes[i].numel() == 0
                                      ? torch::full({anchors.size(0)}, kBelowLow,
                                                    torch::TensorOptions().dtype(torch::kLong).device(anchors.device()))
                                      : matchBoxes(boxIou(boxes[i], anchors), r.fgIou, r.bgIou, true);
    const torch::Tensor foreground = torch::where(matched >= 0)[0];
    const auto count = static_cast<double>(std::max<int64_t>(1, foreground.numel()));
    // The focal loss over the anchors not between the thresholds, a one-hot target per foreground anchor.
    const torch::Tensor logitsHere = logits[image];
    torch::Tensor target = torch::zeros_like(logitsHere);
    target.index_put_({foreground, labels[i].index({matched.index({foreground})})}, 1.0);
    const torch::Tensor valid = matched != kBetween;
    classLoss.push_back(sigmoidFocalLossSum(logitsHere.index({valid}), target.index({valid})) / count);
    // The generalized IoU of the foreground anchors' decoded boxes with their matches.
    const torch::Tensor decoded = coder.decode(codes[image].index({foreground}), anchors.index({foreground}));
    boxLoss.push_back(generalizedBoxIouLossSum(decoded, boxes[i].index({matched.index({foreground})})) / count);
  }
  const auto n = static_cast<double>(images.size());
  return {{"classification", sumInOrder(classLoss) / n}, {"bbox_regression", sumInOrder(boxLoss) / n}};
}

}  // namespace studio::detection
