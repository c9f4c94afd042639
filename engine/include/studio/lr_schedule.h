#pragma once
// The learning-rate (and momentum) schedule as a pure function of the
// optimizer step, matching PyTorch's Python schedulers: StepLR,
// CosineAnnealingLR, LinearLR, OneCycleLR, CyclicLR, and a linear warm-up
// composed like SequentialLR([LinearLR, main], milestones=[warmup_steps]).
// Torch-free, so the UI draws the exact curve before a run starts.
// Thread: immutable after construction; any thread.

#include <cstdint>
#include <optional>

#include "studio/train_config.h"

namespace studio {

class LrSchedule {
 public:
  // baseLr: optimizer.lr; totalSteps: the run's optimizer steps (for cosine
  // t_max 0 and onecycle total_steps 0).
  LrSchedule(const ScheduleConfig& config, double baseLr, int64_t totalSteps);

  // Learning rate of the optimizer step with this 0-based index.
  double lr(int64_t step) const;
  // Momentum (SGD) or beta1 (Adam/AdamW) when the schedule cycles it.
  std::optional<double> momentum(int64_t step) const;

 private:
  double mainLr(int64_t t) const;
  ScheduleConfig m_config;
  double m_baseLr;
  int64_t m_totalSteps;
};

struct StepPlan {
  int64_t microBatchesPerEpoch = 0;
  int64_t stepsPerEpoch = 0;   // optimizer steps; a short last group counts as one
  int64_t totalSteps = 0;      // optimizer steps of the whole run
};
// How many steps a run of these settings takes on trainExamples images.
StepPlan planSteps(const TrainConfig& config, int64_t trainExamples);

}  // namespace studio
