#pragma once
// Builds the classifier a ModelConfig describes. Every model is a
// torch::nn::Sequential, so its parameter names ("0.weight", "1.running_mean")
// are the ones a Python nn.Sequential of the same layers has, and an exported
// state dict loads into it directly.
// Thread: engine thread.

#include <torch/nn/modules/container/sequential.h>

#include "studio/train_config.h"

namespace studio {

torch::nn::Sequential buildModel(const ModelConfig& config, int64_t channels, int64_t height,
                                 int64_t width, int64_t classes);

}  // namespace studio
