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
  for (size_t i = 0; i < heads.detections.size(); ++i) {
    Detections& d = heads.detections[i];
    d.boxes = RcnnTransform::resizeBoxes(d.boxes, batch.sizes[i], original[i]);
    if (d.masks.defined()) d.masks = pasteMasksInImage(d.masks, d.boxes, original[i].height, original[i].width);
  }
  return heads.detections;
}

DetectionLosses FasterRcnnImpl::losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                       const std::vector<torch::Tensor>& labels) {
  if (m_o.roiHeads.masks) throw std::invalid_argument("detection: " + m_o.kind + " trains on masks too (maskLosses)");
  return trainingLosses(images, std::move(boxes), labels, nullptr);
}

DetectionLosses FasterRcnnImpl::maskLosses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                           const std::vector<torch::Tensor>& labels, std::vector<torch::Tensor> masks) {
  if (!m_o.roiHeads.masks) return DetectorNetImpl::maskLosses(images, boxes, labels, masks);
  if (masks.size() != images.size()) throw std::invalid_argument("detection: each image needs its masks");
  return trainingLosses(images, std::move(boxes), labels, &masks);
}

DetectionLosses FasterRcnnImpl::trainingLosses(const std::vector<torch::Tensor>& images,
                                               std::vector<torch::Tensor> boxes,
                                               const std::vector<torch::Tensor>& labels,
                                               std::vector<torch::Tensor>* masks) {
  if (boxes.size() != images.size() || labels.size() != images.size())
    throw std::invalid_argument("detection: each image needs its boxes and labels");
  const ImageBatch batch = m_transform(images, &boxes, true, masks);
  checkPositiveBoxes(boxes);
  const FeatureMaps maps = features(batch.tensors);
  const RpnResult proposals = rpn->forward(batch, maps, &boxes, true);
  std::vector<torch::Tensor> detached;
  for (const auto& p : proposals.proposals) detached.push_back(p.detach());
  const RoiHeadsResult heads = roi_heads->forward(maps, detached, batch.sizes, &boxes, &labels, true, masks);
  DetectionLosses out{{"loss_classifier", heads.lossClassifier}, {"loss_box_reg", heads.lossBoxReg}};
  if (masks) out.emplace_back("loss_mask", heads.lossMask);
  out.emplace_back("loss_objectness", proposals.lossObjectness);
  out.emplace_back("loss_rpn_box_reg", proposals.lossBoxReg);
  return out;
}

}  // namespace studio::detection
