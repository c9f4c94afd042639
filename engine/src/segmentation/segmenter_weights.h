#pragma once
// model.weights for a segmenter (task.kind segmentation, issue 61, item 2),
// as torchvision's builders take them:
//  - a segmenter's state dict (torchvision's COCO-with-VOC-labels weights,
//    or a run's export): every tensor by name; the layers whose shape
//    follows the classes (the heads' last convolutions) are new for the
//    data's classes unless they match (keep_head: they must); an auxiliary
//    head the file has and the model does not is left out;
//  - a classifier's state dict (ResNet-50's or MobileNetV3-Large's, as
//    weights_backbone takes it): its features into the backbone, the
//    classifier left out.
// Every tensor of the backbone must come from the file: a file of another
// kind is refused, naming the first tensor that does not fit.
// Thread: engine thread.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "tensors/weights_file.h"

namespace studio {

struct SegmenterWeights {
  int64_t tensors = 0;        // loaded
  bool backboneOnly = false;  // a classifier's file
  bool headKept = false;      // the file's class layers loaded (their classes are the data's)
  int64_t fileClasses = 0;    // the file's head's classes (0: a classifier's file)
};

// Throws ModelError naming path and the tensor that does not fit.
SegmenterWeights loadSegmenterWeights(torch::nn::Module& net, const NamedTensors& file, const std::string& path,
                                      bool keepHead, bool resnet50);

}  // namespace studio
