#pragma once
// One optimizer step: forward and backward passes over the step's
// micro-batches, then the weight update, all on the device (no host sync).
// StepRunner is the interface the loops call; EagerStep runs it as it comes,
// GraphedStep (graphed_step.h) replays one recorded CUDA graph of it, and
// OomBackoff (oom_backoff.h) wraps them. StepMath is the arithmetic they
// share (and batch-find's probe step).
// Thread: engine thread.

#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/batch_loader.h"
#include "train/run_context.h"

namespace studio {

struct StepInput {
  const std::vector<Batch>& group;  // accumulation_steps micro-batches, fewer at an epoch's end
  int64_t samples = 0;              // the group's examples, of all ranks
  double lr = 0;
  std::optional<double> momentum;  // a schedule's cycling momentum
  bool full = true;                // k whole micro-batches: the shape every other step has (recorded, tuned)
};

class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Returns the step's figures on the device: [loss, grad norm, scale,
  // skipped, non-finite] (float32).
  virtual torch::Tensor step(const StepInput& in) = 0;
  // performance.cuda_graphs as the summary states it.
  virtual std::string graphStatus() const = 0;
  // True once a graph of the step was recorded (its buffers are fixed).
  virtual bool recorded() const { return false; }
  // From now on every step runs eagerly (the probes); `status` says why.
  virtual void graphsOff(const std::string& status) = 0;
};

// The learning rate and momentum of an update: numbers, or (a recorded
// step) device scalars written before each replay.
struct StepRates {
  double lr = 0;
  std::optional<double> momentum;
  torch::Tensor lrDevice, momentumDevice;  // defined: read from these
};

class StepMath {
 public:
  explicit StepMath(RunContext& ctx);
  // The micro-batches' forward and backward passes; returns the group's
  // mean loss (each micro-batch weighs by its share of `groupSamples`).
  torch::Tensor forwardBackward(const std::vector<torch::Tensor>& xs, const std::vector<torch::Tensor>& ys,
                                int64_t groupSamples);
  // Unscales, checks, clips and applies the gradients; returns the figures
  // [loss, grad norm, scale, skipped, non-finite, then a detector's loss parts].
  torch::Tensor updateWeights(torch::Tensor meanLoss, const StepRates& rates);

 private:
  RunContext& m_ctx;
  // The gradient check without loss scaling: a scratch flag and a scale of 1.
  torch::Tensor m_gradsBad, m_unitScale;
  // A detector's loss parts over the group (Task::lossParts), until the
  // step's figures take them.
  torch::Tensor m_parts;
};

class EagerStep : public StepRunner {
 public:
  EagerStep(RunContext& ctx, StepMath& math, std::string status)
      : m_ctx(ctx), m_math(math), m_status(std::move(status)) {}
  torch::Tensor step(const StepInput& in) override;
  std::string graphStatus() const override { return m_status; }
  void graphsOff(const std::string& status) override { m_status = status; }
  // After a graph was recorded the gradients live in its buffers: they are
  // zeroed in place, never freed, so the graph's pointers stay valid.
  void keepGradBuffers() { m_keepGrads = true; }

 private:
  RunContext& m_ctx;
  StepMath& m_math;
  std::string m_status;
  bool m_keepGrads = false;
};

// The run's step runner: graphed when performance.cuda_graphs allows it,
// inside the out-of-memory back-off. Throws std::invalid_argument when
// cuda_graphs is on and the run cannot record its step.
std::unique_ptr<StepRunner> makeStepRunner(RunContext& ctx);

}  // namespace studio
