#pragma once
// Reading a run's trained weights back, for the suites that look inside.
#include <torch/nn/modules/container/sequential.h>


#include "models/model_factory.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "text_file.h"

namespace studio::test {

inline torch::nn::Sequential weightsOf(const std::string& runDir, const std::string& which = "last") {
  TrainConfig cfg = readRunSettings(runDir);
  torch::nn::Sequential model = buildModel(cfg.model, 1, 28, 28, 10);
  loadModelWeights(runDir + "/checkpoints/" + which + ".ckpt", model);
  return model;
}

}  // namespace studio::test
