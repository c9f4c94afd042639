#pragma once
// Builds the classifier a ModelConfig describes. Every model is a
// torch::nn::Sequential, so its parameter names ("0.weight", "1.running_mean")
// are the ones a Python nn.Sequential of the same layers has, and an exported
// state dict loads into it directly.
// Thread: engine thread.

#include <torch/nn/modules/container/sequential.h>

#include "studio/dataset_info.h"
#include "studio/train_config.h"

namespace studio {

// mlp takes any input (images flattened, table features); cnn and resnet
// take images of any size and channel count: the cnn's feature map is
// average-pooled to at most 7x7 before its classifier (28x28 images reach
// 7x7 by its own pooling, so they are unchanged).
torch::nn::Sequential buildModel(const ModelConfig& config, const InputShape& input, int64_t classes);

}  // namespace studio
