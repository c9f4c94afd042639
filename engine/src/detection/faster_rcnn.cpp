#include "detection/faster_rcnn.h"

#include <utility>

namespace studio::detection {

FasterRcnnImpl::FasterRcnnImpl(DetectorOptions options)
    : DetectorNetImpl(std::move(options)), m_transform(m_o.transform) {
  backbone =
      register_module("backbone", Backbone(m_o.kind, m_o.pretrained, m_o.frozenNormOn(), m_o.trainableBackboneLayers));
  rpn = register_module("rpn", Rpn(256, m_o.rpn));
  roi_heads = register_module("roi_heads", RoiHeads(256, m_o.classes, m_o.roiHeads));
}

std::vector<Detections> FasterRcnnImpl::detect(const std::vector<torch::Tensor>& images) {
  std::vector<ImageSize> original;
  for (const auto& image : images) original.push_back({image.size(-2), image.size(-1)});
  const ImageBatch batch = m_transform(images, nullptr, false);
  const FeatureMaps maps = features(batch.tensors);
  const RpnResult proposals = rpn->forward(batch, maps, nullptr, false);
  RoiHeadsResult heads = roi_heads->forward(maps, proposals.proposals, batch.sizes, nullptr, nullptr, false);
  for (size_t i = 0; i < heads.detections.size(); ++i)
    heads.detections[i].boxes = RcnnTransform::resizeBoxes(heads.detections[i].boxes, batch.sizes[i], original[i]);
  return heads.detections;
}

DetectionLosses FasterRcnnImpl::losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                       const std::vector<torch::Tensor>& labels) {
  if (boxes.size() != images.size() || labels.size() != images.size())
    throw std::invalid_argument("detection: each image needs its boxes and labels");
  const ImageBatch batch = m_transform(images, &boxes, true);
  checkPositiveBoxes(boxes);
  const FeatureMaps maps = features(batch.tensors);
  const RpnResult proposals = rpn->forward(batch, maps, &boxes, true);
  std::vector<torch::Tensor> detached;
  for (const auto& p : proposals.proposals) detached.push_back(p.detach());
  const RoiHeadsResult heads = roi_heads->forward(maps, detached, batch.sizes, &boxes, &labels, true);
  return {{"loss_classifier", heads.lossClassifier},
          {"loss_box_reg", heads.lossBoxReg},
          {"loss_objectness", proposals.lossObjectness},
          {"loss_rpn_box_reg", proposals.lossBoxReg}};
}

}  // namespace studio::detection
