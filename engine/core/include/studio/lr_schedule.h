#pragma once
// The learning-rate (and momentum) schedule as a pure function of the
// optimizer step, matching PyTorch's Python schedulers: StepLR,
// CosineAnnealingLR, LinearLR, OneCycleLR, CyclicLR, and a linear warm-up
// composed like SequentialLR([LinearLR, main], milestones=[warmup_steps]).
// Torch-free, so the UI draws the exact curve before a run starts.
// Thread: immutable after construction; any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// A run trained further (training-studio-cli continue) gets the steps
// [from, to) on top of its schedule: either a schedule of the settings'
// kinds started again over those steps (restart, a warm restart), or one
// constant learning rate.
// How a continued run's learning rate goes on: its schedule started again
// over the new epochs, or one constant rate.
STUDIO_CHOICE(ContinueSchedule, restart, constant)

struct ScheduleExtension {
  int64_t from = 0, to = 0;
  Choice<ContinueSchedule> how = ContinueSchedule::restart;
  ScheduleConfig schedule;  // restart: its schedule
  double lr = 0;            // restart: its optimizer.lr; constant: the learning rate
};

// The whole life of a run's learning rate: the settings' schedule over its
// first baseTotal steps, then each extension from its first step on.
// defaultMomentum: the optimizer's own momentum (SGD) or beta1 (Adam),
// returned where a part does not cycle it while another does (a recorded
// CUDA graph reads the momentum every step).
class RunSchedule {
 public:
  RunSchedule(const ScheduleConfig& config, double baseLr, int64_t baseTotal,
              std::vector<ScheduleExtension> extensions = {}, double defaultMomentum = 0.9);
  double lr(int64_t step) const;
  std::optional<double> momentum(int64_t step) const;
  const std::vector<ScheduleExtension>& extensions() const { return m_extensions; }
  // Some part cycles the momentum: momentum() has a value at every step.
  bool cyclesMomentum() const { return m_cycles; }

 private:
  // The extension that holds this step; -1: the settings' schedule.
  int part(int64_t step) const;
  LrSchedule m_base;
  std::vector<ScheduleExtension> m_extensions;
  std::vector<LrSchedule> m_restarts;  // one per extension (unused for constant)
  double m_defaultMomentum;
  bool m_cycles = false;
};

// Why these settings give no usable schedule over totalSteps steps ("" when
// they do): a OneCycle warm-up of at most one step, where PyTorch's
// OneCycleLR divides by zero. `where` names the settings ("schedule").
std::string schedulePlanError(const ScheduleConfig& config, int64_t totalSteps, const std::string& where = "schedule");

struct StepPlan {
  int64_t microBatchesPerEpoch = 0;
  int64_t stepsPerEpoch = 0;  // optimizer steps; a short last group counts as one
  int64_t totalSteps = 0;     // optimizer steps of the whole run
};
// How many steps a run of these settings takes on trainExamples images: the
// first of train.epochs and train.max_steps to come ends it (either 0: the
// other alone). epochShift steps are added to where the epochs end (a fork's
// steps before its position's epoch began).
StepPlan planSteps(const TrainConfig& config, int64_t trainExamples, int64_t epochShift = 0);
// Why a plan of totalSteps steps is refused ("" when it is not): more than
// kMaxPlannedSteps, which no machine finishes.
std::string stepPlanError(const TrainConfig& config, const StepPlan& plan);

}  // namespace studio
