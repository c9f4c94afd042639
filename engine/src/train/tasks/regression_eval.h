#pragma once
// A regression's evaluation without autograd (InferenceMode): the task's
// loss, and RMSE, MAE and R² per target in the data's units (the outputs and
// targets un-standardised), with the first examples' actual and predicted
// values. Sums are kept on the device in float64 and read back in one sync.
// Thread: engine thread.

#include <functional>

#include <torch/types.h>

#include "train/tasks/classification_eval.h"

namespace studio {

// loss(output, target, sum): the task's loss summed over the batch's values.
using SummedLoss = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)>;

EvalOutcome evaluateRegression(Model& model, const Dataset& set, const LoaderOptions& transform,
                               const EvalOptions& options, const torch::Device& device, const SummedLoss& loss);

}  // namespace studio
