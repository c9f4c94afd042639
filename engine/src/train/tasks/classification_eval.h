#pragma once
// Classification's evaluation without autograd (InferenceMode): loss, accuracy, the confusion
// matrix and the most confidently wrong examples of a split. Everything is
// accumulated on the device and read back in one sync at the end.
// Thread: engine thread.

#include <cstdint>
#include <functional>
#include <vector>

#include <torch/types.h>

#include "data/batch_loader.h"
#include "data/dataset.h"
#include "models/model.h"

namespace studio {

class ProcessGroup;

struct EvalOptions {
  int64_t batchSize = 1000;
  bool autocast = false;
  at::ScalarType autocastDtype = at::kFloat;
  bool channelsLast = false;
  int64_t classes = 0;
  int64_t wrongToKeep = 16;
  // Data parallelism: each rank evaluates its contiguous share of the set
  // and the figures are summed over the ranks (every rank gets them all).
  ProcessGroup* group = nullptr;
  // Called after each batch is issued (batches done, batches in all): the
  // front-end's progress; never a sync with the device.
  std::function<void(int64_t, int64_t)> progress;
};

struct EvalOutcome {
  double loss = 0, accuracy = 0;
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  struct Wrong {
    int64_t index, truth, predicted;
    double confidence;
  };
  std::vector<Wrong> wrong;  // most confident first
};

EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                     const torch::Device& device);

}  // namespace studio
