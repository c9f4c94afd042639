#pragma once
// Mask R-CNN's parts beside the box heads (torchvision 0.26,
// torchvision/models/detection/mask_rcnn.py and roi_heads.py; He et al.,
// "Mask R-CNN", ICCV 2017), with torchvision's module names under
// roi_heads: "mask_head" (MaskRCNNHeads: 3x3 convolutions, each with
// BatchNorm and ReLU in maskrcnn_resnet50_fpn_v2) and "mask_predictor"
// (MaskRCNNPredictor: "conv5_mask", a 2x2 transposed convolution of stride
// 2, ReLU, "mask_fcn_logits", a 1x1 convolution to a logit per class);
// the RoIs pooled 14 x 14 (MultiScaleRoIAlign, sampling ratio 2) by
// roi_heads. In training maskrcnn_loss: each positive proposal's matched
// ground-truth mask cut to its box at the logits' size (roi_align, 28 x 28,
// not aligned, adaptive sampling), binary cross-entropy with the logits of
// its class; in evaluation each detection's probabilities (the sigmoid of
// its class's logits) pasted into its image (paste_masks_in_image: the mask
// padded by a pixel, its box grown to match, resized bilinearly into it).
// Thread: engine thread.

#include <vector>

#include "nets/layers.h"
#include "torch_pch.h"

namespace studio::detection {

// torchvision's heads of 3x3 Conv2dNormActivation blocks (BatchNorm2d,
// ReLU), FastRCNNConvFCHead's (roi_heads.h) and MaskRCNNHeads: the blocks
// appended to head, their last channels returned; initConvsFanOut, once the
// head is whole, draws its convs' weights kaiming_normal_(fan_out, relu), as
// both of torchvision's initialise them.
int64_t appendConvNormRelu(tv::Seq& head, int64_t in, const std::vector<int64_t>& layers);
void initConvsFanOut(tv::Seq& head);
// MaskRCNNHeads(in, layers, dilation 1, norm_layer BatchNorm2d).
tv::Seq maskRcnnHeads(int64_t in, const std::vector<int64_t>& layers);

class MaskRcnnPredictorImpl : public torch::nn::Module {
 public:
  MaskRcnnPredictorImpl(int64_t in, int64_t reduced, int64_t classes);
  torch::Tensor forward(const torch::Tensor& x);  // N x classes x 2h x 2w logits
  torch::nn::ConvTranspose2d conv5_mask{nullptr};
  torch::nn::Conv2d mask_fcn_logits{nullptr};
};
TORCH_MODULE(MaskRcnnPredictor);

// maskrcnn_loss: logits (N x classes x M x M) of the positive proposals of
// every image in order (boxes[i]: image i's, K_i x 4, at the transformed
// size), gtMasks[i] (G_i x H x W, 0/1, at the transformed size), gtLabels[i]
// (G_i) and matched[i] (K_i: each proposal's ground truth).
torch::Tensor maskRcnnLoss(const torch::Tensor& logits, const std::vector<torch::Tensor>& boxes,
                           const std::vector<torch::Tensor>& gtMasks, const std::vector<torch::Tensor>& gtLabels,
                           const std::vector<torch::Tensor>& matched);

// maskrcnn_inference: each detection's probabilities of its label, split
// per image (N_i x 1 x M x M).
std::vector<torch::Tensor> maskProbabilities(const torch::Tensor& logits, const std::vector<torch::Tensor>& labels);

// paste_masks_in_image(masks, boxes, (height, width), padding 1): N x 1 x
// height x width probabilities from N x 1 x M x M masks and their boxes in
// the image's pixels.
torch::Tensor pasteMasksInImage(const torch::Tensor& masks, const torch::Tensor& boxes, int64_t height, int64_t width);

}  // namespace studio::detection
