#pragma once
// A run that measures instead of training: the learning-rate range test
// (lr_find.cpp) and the largest micro-batch (batch_find.cpp), each its own
// loop over the run's set-up.
// Thread: engine thread.

#include <cstdint>
#include <memory>
#include <string>

#include "studio/session.h"
#include "train/run_context.h"

namespace studio {

class Probe {
 public:
  explicit Probe(RunContext& ctx) : m_ctx(ctx) {}
  virtual ~Probe() = default;
  void run() { measure(m_ctx); }
  // Its figures in the run's summary (what it found so far, also when it failed).
  virtual void addTo(RunSummary& s) const = 0;

 protected:
  // Its loop over the run's set-up.
  virtual void measure(RunContext& c) = 0;
  // The probe's steps are eager (`graphs`: what the CUDA-graph status says)
  // and the session shows it running with this many steps planned.
  void begin(const std::string& graphs, int64_t plannedSteps);
  RunContext& m_ctx;
};

// The probe the run's start asks for; nullptr for a run that trains.
std::unique_ptr<Probe> makeProbe(RunContext& ctx);

}  // namespace studio
