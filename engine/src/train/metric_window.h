#pragma once
// The per-step figures between two flushes: they stay on the device, and a
// flush moves them to the host in one sync, makes the training records
// (with samples/s, step time and memory), posts and records them, and hands
// each to the callbacks.
// Thread: engine thread.

#include <vector>

#include <torch/types.h>

#include "train/run_context.h"

namespace studio {

// A step's figures known on the host.
struct PendingStep {
  int64_t step, epoch;
  double lr;
  int64_t samples;
  int64_t microBatch;
};

class MetricWindow {
 public:
  explicit MetricWindow(RunContext& ctx) : m_ctx(ctx), m_start(Clock::now()) {}
  // `figures`: the step runner's [loss, grad norm, scale, skipped, non-finite].
  void add(torch::Tensor figures, const PendingStep& step);
  size_t size() const { return m_steps.size(); }
  // The last step's figures (still on the device).
  const torch::Tensor& last() const { return m_figures.back(); }
  void flush();
  // The time from now on is training time (after a pause, an evaluation).
  void restart() { m_start = Clock::now(); }

 private:
  RunContext& m_ctx;
  std::vector<torch::Tensor> m_figures;
  std::vector<PendingStep> m_steps;
  Clock::time_point m_start;
};

}  // namespace studio
