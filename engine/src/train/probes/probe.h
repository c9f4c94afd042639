#pragma once
// A run that measures instead of training: the learning-rate range test
// (lr_find.cpp) and the largest micro-batch (batch_find.cpp), each its own
// loop over the run's set-up.
// Thread: engine thread.

#include <memory>

#include "studio/session.h"
#include "train/run_context.h"

namespace studio {

class Probe {
 public:
  virtual ~Probe() = default;
  virtual void run() = 0;
  // Its figures in the run's summary (what it found so far, also when it failed).
  virtual void addTo(RunSummary& s) const = 0;
};

// The probe the run's start asks for; nullptr for a run that trains.
std::unique_ptr<Probe> makeProbe(RunContext& ctx);

}  // namespace studio
