#pragma once
// memory.oom_backoff around the step runner: a step that runs out of memory
// is made again with the micro-batch halved (the loader's batches split in
// twice as many forward passes: the same effective batch, the same
// schedule), until it fits or the micro-batch is 1. Full steps go to the
// graphed runner while it records or replays, the rest to the eager one.
// Thread: engine thread.

#include <memory>
#include <string>

#include "train/step/graphed_step.h"
#include "train/step/step_runner.h"

namespace studio {

class OomBackoff : public StepRunner {
 public:
  // `graphed` may be null (no CUDA graphs for this run).
  OomBackoff(RunContext& ctx, std::unique_ptr<StepMath> math, std::unique_ptr<EagerStep> eager,
             std::unique_ptr<GraphedStep> graphed);
  ~OomBackoff() override;
  torch::Tensor step(const StepInput& in) override;
  std::string graphStatus() const override;
  bool recorded() const override { return m_graphed && m_graphed->recorded(); }
  void graphsOff(const std::string& status) override;

 private:
  // Until a step of this size has succeeded (the first step, the first
  // after a back-off) the BatchNorm statistics and the random state are
  // kept before it, so that a failed try leaves no trace: the run then
  // equals one started with the smaller micro-batch and the larger
  // accumulation. Later steps repeat a shape that fitted and are not copied.
  bool m_sizeProven = false;
  RunContext& m_ctx;
  std::unique_ptr<StepMath> m_math;
  std::unique_ptr<EagerStep> m_eager;
  std::unique_ptr<GraphedStep> m_graphed;
};

}  // namespace studio
