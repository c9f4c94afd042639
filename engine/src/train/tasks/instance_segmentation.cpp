// Instance segmentation (task.kind instance_segmentation, issue 61): a
// detector with a mask head (Mask R-CNN) trained on boxes that each carry
// their mask, as torchvision's references/detection trains it: detection's
// flow (train/tasks/detection_task.h) with the masks through the
// augmentations into loss_mask, and each evaluation's masks scored as
// COCOeval's "segm" beside the boxes' "bbox" (eval_mask_map, eval_mask_map50).
#include <memory>
#include <optional>

#include "data/instance_masks.h"
#include "detection/roi_heads.h"
#include "train/tasks/detection_task.h"

namespace studio {
namespace {

class InstanceSegmentation : public Detection {
 public:
  InstanceSegmentation(const TrainConfig& c, const TaskData& data) : Detection(c, data), m_masks(m_boxes) {}
  std::string name() const override { return "instance_segmentation"; }

 protected:
  torch::Tensor trainingMasks(const detection::PackedImage& im) const override {
    return m_masks.of(im.item, im.image.size(1), im.image.size(2));
  }
  bool withMasks() const override { return true; }
  // In the image's own pixels, as its boxes are (Detection::addRows).
  void addMasks(std::vector<Rle>& masks, const detection::PackedImage& im,
                const detection::Detections& d) const override {
    const AnnotatedImage& image = m_boxes->images.at(static_cast<size_t>(im.item));
    for (Rle& m : detection::detectedMasks(d.masks, image.height, image.width)) masks.push_back(std::move(m));
  }

 private:
  detection::TrainingMasks m_masks;
};

}  // namespace

std::unique_ptr<Task> makeInstanceSegmentation(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<InstanceSegmentation>(config, data);
}

}  // namespace studio
