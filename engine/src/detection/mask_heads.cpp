#include "detection/mask_heads.h"

#include <algorithm>

#include "detection/box_ops.h"

#include <torch/nn/init.h>

namespace studio::detection {

namespace nn = torch::nn;

int64_t appendConvNormRelu(tv::Seq& head, int64_t in, const std::vector<int64_t>& layers) {
  for (const int64_t out : layers) {
    head->push_back(tv::convNormAct(in, out, 3, 1, 1, tv::Act::ReLU, tv::NormSpec{}));
    in = out;
  }
  return in;
}

void initConvsFanOut(tv::Seq& head) {
  torch::NoGradGuard noGrad;
  for (const auto& m : head->modules(/*include_self=*/false))
    if (auto* conv = m->as<nn::Conv2d>()) nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
}

tv::Seq maskRcnnHeads(int64_t in, const std::vector<int64_t>& layers) {
  tv::Seq head;
  appendConvNormRelu(head, in, layers);
  initConvsFanOut(head);
  return head;
}

MaskRcnnPredictorImpl::MaskRcnnPredictorImpl(int64_t in, int64_t reduced, int64_t classes) {
  conv5_mask = register_module("conv5_mask", nn::ConvTranspose2d(nn::ConvTranspose2dOptions(in, reduced, 2).stride(2)));
  mask_fcn_logits = register_module("mask_fcn_logits", nn::Conv2d(nn::Conv2dOptions(reduced, classes, 1)));
  // torchvision: every "weight" kaiming_normal_(fan_out, relu); the biases as the layers make them.
  torch::NoGradGuard noGrad;
  nn::init::kaiming_normal_(conv5_mask->weight, 0, torch::kFanOut, torch::kReLU);
  nn::init::kaiming_normal_(mask_fcn_logits->weight, 0, torch::kFanOut, torch::kReLU);
}

torch::Tensor MaskRcnnPredictorImpl::forward(const torch::Tensor& x) {
  return mask_fcn_logits(torch::relu(conv5_mask(x)));
}

torch::Tensor maskRcnnLoss(const torch::Tensor& logits, const std::vector<torch::Tensor>& boxes,
                           const std::vector<torch::Tensor>& gtMasks, const std::vector<torch::Tensor>& gtLabels,
                           const std::vector<torch::Tensor>& matched) {
  const int64_t m = logits.size(-1);
  std::vector<torch::Tensor> labels, targets;
  for (size_t i = 0; i < boxes.size(); ++i) {
    labels.push_back(gtLabels[i].index({matched[i]}));
    // project_masks_on_boxes: roi_align(gt_masks[:, None], (matched, boxes), (M, M), 1.0)[:, 0].
    const torch::Tensor rois = torch::cat({matched[i].to(boxes[i].scalar_type()).unsqueeze(1), boxes[i]}, 1);
    const torch::Tensor masks = gtMasks[i].unsqueeze(1).to(rois.scalar_type());
    targets.push_back(masks.size(0) == 0 || rois.size(0) == 0
                          ? torch::zeros({rois.size(0), m, m}, rois.options())
                          : roiAlign(masks, rois, {m, m}, 1.0, -1, false).select(1, 0));
  }
  const torch::Tensor label = torch::cat(labels).to(torch::kLong), target = torch::cat(targets);
  if (target.numel() == 0) return logits.sum() * 0;
  const torch::Tensor picked = logits.index({torch::arange(label.size(0), label.options()), label});
  return torch::binary_cross_entropy_with_logits(picked, target.to(picked.scalar_type()));
}

std::vector<torch::Tensor> maskProbabilities(const torch::Tensor& logits, const std::vector<torch::Tensor>& labels) {
  std::vector<int64_t> perImage;
  for (const auto& l : labels) perImage.push_back(l.size(0));
  const torch::Tensor all = torch::cat(labels).to(torch::kLong);
  const torch::Tensor probabilities =
      logits.sigmoid().index({torch::arange(logits.size(0), all.options()), all}).unsqueeze(1);
  return probabilities.split_with_sizes(perImage, 0);
}

torch::Tensor pasteMasksInImage(const torch::Tensor& masksIn, const torch::Tensor& boxesIn, int64_t height,
                                int64_t width) {
  if (masksIn.size(0) == 0) return masksIn.new_empty({0, 1, height, width});
  // expand_masks, expand_boxes (padding 1): the boxes' halves scaled by (M + 2) / M, then to int64.
  const int64_t m = masksIn.size(-1);
  const double scale = static_cast<double>(m + 2) / static_cast<double>(m);
  const torch::Tensor masks = torch::constant_pad_nd(masksIn, {1, 1, 1, 1}, 0);
  const torch::Tensor wHalf = (boxesIn.select(1, 2) - boxesIn.select(1, 0)) * 0.5 * scale;
  const torch::Tensor hHalf = (boxesIn.select(1, 3) - boxesIn.select(1, 1)) * 0.5 * scale;
  const torch::Tensor xc = (boxesIn.select(1, 2) + boxesIn.select(1, 0)) * 0.5;
  const torch::Tensor yc = (boxesIn.select(1, 3) + boxesIn.select(1, 1)) * 0.5;
  const torch::Tensor boxes = torch::stack({xc - wHalf, yc - hHalf, xc + wHalf, yc + hHalf}, 1).to(torch::kLong).cpu();
  const auto b = boxes.accessor<int64_t, 2>();
  torch::Tensor out = torch::zeros({masks.size(0), 1, height, width}, masks.options());
  for (int64_t i = 0; i < masks.size(0); ++i) {
    // paste_mask_in_image: the mask resized to the box's pixels (+1, at least 1), its part in the image.
    const int64_t x0b = b[i][0], y0b = b[i][1], x1b = b[i][2], y1b = b[i][3];
    const int64_t w = std::max<int64_t>(x1b - x0b + 1, 1), h = std::max<int64_t>(y1b - y0b + 1, 1);
    const torch::Tensor resized =
        at::upsample_bilinear2d(masks[i].unsqueeze(0), {h, w}, /*align_corners=*/false).select(0, 0).select(0, 0);
    const int64_t x0 = std::max<int64_t>(x0b, 0), x1 = std::min<int64_t>(x1b + 1, width);
    const int64_t y0 = std::max<int64_t>(y0b, 0), y1 = std::min<int64_t>(y1b + 1, height);
    if (x1 <= x0 || y1 <= y0) continue;
    out[i][0].slice(0, y0, y1).slice(1, x0, x1).copy_(
        resized.slice(0, y0 - y0b, y1 - y0b).slice(1, x0 - x0b, x1 - x0b));
  }
  return out;
}

}  // namespace studio::detection
