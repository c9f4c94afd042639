#pragma once
// task.kind instance_segmentation's masks beside detection's boxes
// (data/box_data.h): each image's training masks in its packed rows' order,
// and a detector's mask probabilities as COCO's RLEs in the image's own
// pixels. The masks stay in the annotations (one RLE per box) and are
// decoded for the images of a step, as torchvision's references decode
// them in their dataset (ConvertCocoPolysToMask: crowds left out).
// Thread: engine thread.

#include <cstdint>
#include <memory>
#include <vector>

#include "studio/box_annotations.h"
#include "torch_pch.h"

namespace studio::detection {

class TrainingMasks {
 public:
  // a: read with masks (BoxAnnotations::masks, one per box).
  explicit TrainingMasks(std::shared_ptr<const BoxAnnotations> a);
  // The masks of item's boxes that training uses (crowds left out, in the
  // annotations' order, as box_data.cpp packs the boxes): K x height x
  // width, uint8 0/1, resized by nearest from the image's own size to the
  // pool's height x width.
  torch::Tensor of(int64_t item, int64_t height, int64_t width) const;

 private:
  std::shared_ptr<const BoxAnnotations> m_a;
  std::vector<std::vector<size_t>> m_boxesOf;  // per image, its training boxes' indices
};

// A detector's masks (K x 1 x h x w probabilities, Detections::masks, in
// an image placed at h x w) in the image's own height x width (resized
// bilinearly when it was placed smaller), thresholded at 0.5 as
// torchvision's references' coco_eval does, each as COCO's RLE.
std::vector<Rle> detectedMasks(const torch::Tensor& probabilities, int64_t height, int64_t width);

}  // namespace studio::detection
