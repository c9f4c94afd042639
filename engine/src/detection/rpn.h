#pragma once
// torchvision's region proposal network (torchvision/models/detection/rpn.py,
// anchor_utils.py) with its module names: the anchors of each feature level,
// RPNHead ("conv.0.0", "cls_logits", "bbox_pred"), the proposals kept by
// per-level top-k, clipping, small-box and score filters and NMS per level,
// and in training the objectness and box losses over anchors the matcher
// (0.7 / 0.3, low-quality matches kept) and the balanced sampler choose.
// Thread: engine thread.

#include <string>
#include <utility>
#include <vector>

#include "detection/rcnn_transform.h"
#include "torch_pch.h"

namespace studio::detection {

using FeatureMaps = std::vector<std::pair<std::string, torch::Tensor>>;  // by name, in order

struct RpnOptions {
  std::vector<std::vector<double>> anchorSizes;   // per feature level
  std::vector<std::vector<double>> aspectRatios;  // per feature level
  int64_t preNmsTrain = 2000, preNmsTest = 1000, postNmsTrain = 2000, postNmsTest = 1000;
  double nms = 0.7, fgIou = 0.7, bgIou = 0.3;
  int64_t batchPerImage = 256;
  double positiveFraction = 0.5, scoreThresh = 0.0;
  int64_t convDepth = 1;  // RPNHead's conv_depth: 3x3 convs with ReLU before the two heads
};

struct RpnResult {
  std::vector<torch::Tensor> proposals;      // per image, K x 4 in the batch's pixels
  torch::Tensor lossObjectness, lossBoxReg;  // training only
};

// AnchorGenerator: each level's cell anchors (rounded) shifted over its grid,
// the stride being the padded batch's size over the level's.
torch::Tensor cellAnchors(const std::vector<double>& sizes, const std::vector<double>& ratios,
                          const torch::TensorOptions& options);
// permute_and_flatten (and the dense heads' own): a level's N x A*C x H x W
// to N x H*W*A x C.
torch::Tensor flattenLevel(const torch::Tensor& t, int64_t c);

torch::Tensor gridAnchors(const ImageBatch& images, const std::vector<torch::Tensor>& features,
                          const RpnOptions& options);

// RPNHead: depth 3x3 convs with ReLU ("conv.0.0", "conv.1.0", ..), then per
// anchor an objectness logit ("cls_logits") and four box offsets
// ("bbox_pred"); every conv normal(0, 0.01) with zero bias.
class RpnHeadImpl : public torch::nn::Module {
 public:
  RpnHeadImpl(int64_t channels, int64_t anchors, int64_t depth = 1);
  torch::nn::Sequential conv{nullptr};
  torch::nn::Conv2d cls_logits{nullptr}, bbox_pred{nullptr};
};
TORCH_MODULE(RpnHead);

class RpnImpl : public torch::nn::Module {
 public:
  RpnImpl(int64_t channels, RpnOptions options);
  // targets: each image's ground-truth boxes (training).
  RpnResult forward(const ImageBatch& images, const FeatureMaps& features, const std::vector<torch::Tensor>* targets,
                    bool training);
  RpnHead head{nullptr};

 private:
  RpnOptions m_o;
};
TORCH_MODULE(Rpn);

}  // namespace studio::detection
