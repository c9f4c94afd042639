#pragma once
// performance.cuda_graphs: after kWarmup eager steps, each full step (k full
// micro-batches) replays one recorded graph of the whole step; the inputs,
// learning rate and momentum are static device tensors written before each
// replay. A short last group of an epoch runs eagerly on the same gradient
// buffers (OomBackoff sends it to the eager runner).
// Thread: engine thread.

#include <string>
#include <vector>

#include "train/step/step_graph.h"
#include "train/step/step_runner.h"

namespace studio {

// Why this run cannot record its step ("": it can).
std::string graphsUnavailable(const RunContext& ctx);

class GraphedStep : public StepRunner {
 public:
  static constexpr int64_t kWarmup = 3;
  // Moves the engine thread to a side stream (capture needs one).
  GraphedStep(RunContext& ctx, StepMath& math, EagerStep& eager);
  torch::Tensor step(const StepInput& in) override;
  std::string graphStatus() const override { return m_status; }
  bool recorded() const override { return m_graph.captured(); }
  void graphsOff(const std::string& status) override {
    m_on = false;
    m_status = status;
  }
  // False once recording failed: every step is eager then.
  bool on() const { return m_on; }

 private:
  RunContext& m_ctx;
  StepMath& m_math;
  EagerStep& m_eager;
  StepGraph m_graph;
  bool m_on = true;
  std::string m_status = "off: the run ended before the step was recorded";
  int64_t m_warmupDone = 0;
  std::vector<torch::Tensor> m_staticX, m_staticY;  // the recorded inputs
  torch::Tensor m_lr, m_momentum, m_row;
};

}  // namespace studio
