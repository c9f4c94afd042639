#pragma once
// torchvision's RoI heads for Faster R-CNN (torchvision/models/detection/
// roi_heads.py, torchvision/ops/poolers.py) with its module names:
// MultiScaleRoIAlign (each box pooled 7 x 7 from the feature level its size
// maps to, sampling ratio 2), TwoMLPHead ("box_head.fc6", "fc7") or
// FastRCNNConvFCHead ("box_head.0" .. "3" conv-BN-ReLU, "box_head.5" the
// fully connected layer; fasterrcnn_resnet50_fpn_v2's) and
// FastRCNNPredictor ("box_predictor.cls_score", "bbox_pred"); in training the
// proposals and the ground truth matched (0.5), sampled (512 per image, a
// quarter positive) and the classifier and box losses; otherwise the boxes
// decoded per class, clipped, filtered by score, NMS per class, the best
// detectionsPerImage kept. Thread: engine thread.

#include <functional>
#include <memory>
#include <vector>

#include "detection/mask_heads.h"
#include "detection/rcnn_transform.h"
#include "detection/rpn.h"
#include "torch_pch.h"

namespace studio::detection {

struct RoiHeadsOptions {
  std::vector<std::string> featureNames{"0", "1", "2", "3"};  // the levels pooled from
  int64_t poolSize = 7, samplingRatio = 2, representation = 1024;
  double fgIou = 0.5, bgIou = 0.5;
  int64_t batchPerImage = 512;
  double positiveFraction = 0.25;
  double scoreThresh = 0.05, nms = 0.5;
  int64_t detectionsPerImage = 100;
  // FastRCNNConvFCHead's convolutions (3x3 with BatchNorm and ReLU) before
  // one fully connected layer of `representation`; empty: TwoMLPHead.
  std::vector<int64_t> convLayers;
  // Mask R-CNN (detection/mask_heads.h): a mask per detection, from RoIs
  // pooled maskPoolSize x maskPoolSize through MaskRCNNHeads' maskLayers.
  bool masks = false;
  int64_t maskPoolSize = 14;
  std::vector<int64_t> maskLayers{256, 256, 256, 256};
};

struct Detections {
  torch::Tensor boxes;    // K x 4 (x1, y1, x2, y2)
  torch::Tensor scores;   // K
  torch::Tensor labels;   // K, int64; 0 is the background, never returned
  torch::Tensor masks{};  // Mask R-CNN's: K x 1 x H x W probabilities (the heads': M x M; detect(): the image's)
};

struct RoiHeadsResult {
  std::vector<Detections> detections;        // evaluation
  torch::Tensor lossClassifier, lossBoxReg;  // training
  torch::Tensor lossMask;                    // training, Mask R-CNN's
};

// MultiScaleRoIAlign over the named levels: each box's level by
// LevelMapper (canonical 224 px at level 4), its scale inferred from the
// level's size against the largest image's.
torch::Tensor multiScaleRoiAlign(const FeatureMaps& features, const std::vector<torch::Tensor>& boxes,
                                 const std::vector<ImageSize>& imageSizes, const RoiHeadsOptions& options);

class TwoMlpHeadImpl : public torch::nn::Module {
 public:
  TwoMlpHeadImpl(int64_t in, int64_t representation);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear fc6{nullptr}, fc7{nullptr};
};
TORCH_MODULE(TwoMlpHead);

class FastRcnnPredictorImpl : public torch::nn::Module {
 public:
  FastRcnnPredictorImpl(int64_t in, int64_t classes);
  torch::nn::Linear cls_score{nullptr}, bbox_pred{nullptr};
};
TORCH_MODULE(FastRcnnPredictor);

class RoiHeadsImpl : public torch::nn::Module {
 public:
  // classes: with the background (torchvision's num_classes).
  RoiHeadsImpl(int64_t channels, int64_t classes, RoiHeadsOptions options);
  // gtBoxes, gtLabels: per image (training); gtMasks too with masks (G x H
  // x W, 0/1, at the transformed size).
  RoiHeadsResult forward(const FeatureMaps& features, std::vector<torch::Tensor> proposals,
                         const std::vector<ImageSize>& imageSizes, const std::vector<torch::Tensor>* gtBoxes,
                         const std::vector<torch::Tensor>* gtLabels, bool training,
                         const std::vector<torch::Tensor>* gtMasks = nullptr);
  std::shared_ptr<torch::nn::Module> box_head;  // TwoMlpHead, or FastRCNNConvFCHead's Sequential
  FastRcnnPredictor box_predictor{nullptr};
  std::shared_ptr<torch::nn::Module> mask_head;  // with masks: MaskRCNNHeads' Sequential
  MaskRcnnPredictor mask_predictor{nullptr};
  const RoiHeadsOptions& options() const { return m_o; }

 private:
  RoiHeadsOptions m_o;
  std::function<torch::Tensor(const torch::Tensor&)> m_boxHead, m_maskHead;
  // The masks' logits for each image's boxes (pooled maskPoolSize x maskPoolSize).
  torch::Tensor maskLogits(const FeatureMaps& features, const std::vector<torch::Tensor>& boxes,
                           const std::vector<ImageSize>& imageSizes);
};
TORCH_MODULE(RoiHeads);

}  // namespace studio::detection
