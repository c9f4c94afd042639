#pragma once
// Object detection (task.kind detection, issue 43; detection.cpp) and the
// task built on it, instance segmentation (instance_segmentation.cpp, issue
// 61): a detector's loss is torchvision's sum of its parts, computed in its
// forward pass from the boxes (data/box_data.h unpacks them from the
// batch's targets) after the box-aware augmentations; an evaluation is
// COCO's figures (studio/coco_eval.h) of its detections, in each image's own
// pixels, against the annotations' boxes (crowds ignored as COCO ignores
// them). A task whose boxes carry masks gives its training masks and its
// detections' masks through the two hooks below; the masks then follow the
// augmentations, train the mask head and are scored as COCO's "segm".
// Thread: engine thread.

#include <memory>
#include <string>
#include <vector>

#include "data/box_augment.h"
#include "data/box_data.h"
#include "train/tasks/task.h"

namespace studio {

namespace detection {
struct Detections;
}

class Detection : public Task {
 public:
  Detection(const TrainConfig& c, const TaskData& data);
  std::string name() const override { return "detection"; }
  torch::Tensor loss(const torch::Tensor&, const torch::Tensor&) const override;
  bool lossInModel() const override { return true; }
  std::vector<std::string> lossParts() const override { return m_parts; }
  torch::Tensor modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                          torch::Tensor& parts) const override;
  // Each rank detects in its share of the set (forEachEvalSlice); the
  // boxes (and masks) of all ranks are gathered before COCO's figures are computed.
  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override;
  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override;
  // COCOeval's stats: AP@[.50:.95] (map), AP50 and AP75.
  Figures figures(const EvalOutcome& o) const override;

 protected:
  // A task whose boxes carry masks: the training masks of an image's packed
  // boxes (K x h x w, uint8, at its pool size; undefined: none), and its
  // detections' masks in its own pixels (one per detection, appended).
  virtual torch::Tensor trainingMasks(const detection::PackedImage&) const { return {}; }
  virtual bool withMasks() const { return false; }
  virtual void addMasks(std::vector<Rle>&, const detection::PackedImage&, const detection::Detections&) const {}

  std::shared_ptr<const BoxAnnotations> m_boxes;

 private:
  EvalOutcome cocoOutcome(const std::vector<int64_t>& items, const torch::Tensor& rows,
                          const std::vector<Rle>& masks) const;
  void addRows(std::vector<double>& rows, const detection::PackedImage& image, const detection::Detections& d) const;

  detection::BoxAugment m_augment;
  std::vector<std::string> m_parts;  // the detector's losses (torchvision's names)
};

}  // namespace studio
