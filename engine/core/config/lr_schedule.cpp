#include "studio/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <vector>

namespace studio {
namespace {

double annealCos(double start, double end, double pct) {
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
}
double annealLinear(double start, double end, double pct) { return (end - start) * pct + start; }

struct Phase {
  double endStep, startLr, endLr, startMomentum, endMomentum;
};

// OneCycleLR.get_lr, step for step.
std::pair<double, double> oneCycleAt(const OneCycleScheduleConfig& c, int64_t total, int64_t step) {
  const double initial = c.max_lr / c.div_factor;
  const double minLr = initial / c.final_div_factor;
  const double t = static_cast<double>(total);
  std::vector<Phase> phases;
  if (c.three_phase) {
    phases = {{c.pct_start * t - 1, initial, c.max_lr, c.max_momentum, c.base_momentum},
              {2 * c.pct_start * t - 2, c.max_lr, initial, c.base_momentum, c.max_momentum},
              {t - 1, initial, minLr, c.max_momentum, c.max_momentum}};
  } else {
    phases = {{c.pct_start * t - 1, initial, c.max_lr, c.max_momentum, c.base_momentum},
              {t - 1, c.max_lr, minLr, c.base_momentum, c.max_momentum}};
  }
  auto anneal = c.anneal == OneCycleAnneal::linear ? annealLinear : annealCos;
  double start = 0;
  const double s = static_cast<double>(step);
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    if (s <= p.endStep || i + 1 == phases.size()) {
      const double pct = (s - start) / (p.endStep - start);
      return {anneal(p.startLr, p.endLr, pct), anneal(p.startMomentum, p.endMomentum, pct)};
    }
    start = p.endStep;
  }
  return {minLr, c.max_momentum};
}

// CyclicLR.get_lr: returns {lr, momentum}.
std::pair<double, double> cyclicAt(const CyclicScheduleConfig& c, int64_t step) {
  const double up = static_cast<double>(c.step_size_up);
  const double down = c.step_size_down > 0 ? static_cast<double>(c.step_size_down) : up;
  const double total = up + down;
  const double ratio = up / total;
  const double e = static_cast<double>(step);
  const double cycle = std::floor(1.0 + e / total);
  const double x = 1.0 + e / total - cycle;
  const double scale = x <= ratio ? x / ratio : (x - 1.0) / (ratio - 1.0);
  double fn = 1.0;
  if (c.mode == CyclicMode::triangular2)
    fn = 1.0 / std::pow(2.0, cycle - 1.0);
  else if (c.mode == CyclicMode::exp_range)
    fn = std::pow(c.gamma, e);
  const double lr = c.base_lr + (c.max_lr - c.base_lr) * scale * fn;
  const double momentum = c.max_momentum - (c.max_momentum - c.base_momentum) * scale * fn;
  return {lr, momentum};
}

}  // namespace

LrSchedule::LrSchedule(const ScheduleConfig& config, double baseLr, int64_t totalSteps)
    : m_config(config), m_baseLr(baseLr), m_totalSteps(std::max<int64_t>(totalSteps, 1)) {}

double LrSchedule::mainLr(int64_t t) const {
  const auto& c = m_config;
  if (c.kind == ScheduleKind::step) {
    return m_baseLr * std::pow(c.step.gamma, static_cast<double>(t / c.step.step_size));
  }
  if (c.kind == ScheduleKind::cosine) {
    const int64_t tMax = c.cosine.t_max > 0 ? c.cosine.t_max : std::max<int64_t>(m_totalSteps - c.warmup_steps, 1);
    return c.cosine.eta_min +
           (m_baseLr - c.cosine.eta_min) *
               (1.0 + std::cos(std::numbers::pi * static_cast<double>(t) / static_cast<double>(tMax))) / 2.0;
  }
  if (c.kind == ScheduleKind::linear) {
    const auto& l = c.linear;
    const double done = static_cast<double>(std::min(t, l.total_iters)) / static_cast<double>(l.total_iters);
    return m_baseLr * (l.start_factor + (l.end_factor - l.start_factor) * done);
  }
  return m_baseLr;
}

double LrSchedule::lr(int64_t step) const {
  const auto& c = m_config;
  if (c.kind == ScheduleKind::onecycle) {
    const int64_t total = c.onecycle.total_steps > 0 ? c.onecycle.total_steps : m_totalSteps;
    return oneCycleAt(c.onecycle, total, step).first;
  }
  if (c.kind == ScheduleKind::cyclic) return cyclicAt(c.cyclic, step).first;
  if (step < c.warmup_steps) {
    const double done = static_cast<double>(step) / static_cast<double>(c.warmup_steps);
    return m_baseLr * (c.warmup_start_factor + (1.0 - c.warmup_start_factor) * done);
  }
  return mainLr(step - c.warmup_steps);
}

std::optional<double> LrSchedule::momentum(int64_t step) const {
  const auto& c = m_config;
  if (c.kind == ScheduleKind::onecycle && c.onecycle.cycle_momentum) {
    const int64_t total = c.onecycle.total_steps > 0 ? c.onecycle.total_steps : m_totalSteps;
    return oneCycleAt(c.onecycle, total, step).second;
  }
  if (c.kind == ScheduleKind::cyclic && c.cyclic.cycle_momentum) return cyclicAt(c.cyclic, step).second;
  return std::nullopt;
}

StepPlan planSteps(const TrainConfig& config, int64_t trainExamples, int64_t epochShift) {
  StepPlan p;
  const int64_t b = config.train.batch_size;
  const int64_t k = config.train.accumulation_steps;
  p.microBatchesPerEpoch = (trainExamples + b - 1) / b;
  p.stepsPerEpoch = (p.microBatchesPerEpoch + k - 1) / k;
  const int64_t maxSteps = config.train.max_steps;
  if (config.train.epochs <= 0) {
    p.totalSteps = maxSteps;
  } else {
    // Settings allow up to 1e6 epochs; a step count past int64 saturates.
    const int64_t epochs = config.train.epochs;
    const int64_t byEpochs = p.stepsPerEpoch > (std::numeric_limits<int64_t>::max() - epochShift) / epochs
                                 ? std::numeric_limits<int64_t>::max()
                                 : p.stepsPerEpoch * epochs + epochShift;
    p.totalSteps = maxSteps > 0 ? std::min(maxSteps, byEpochs) : byEpochs;
  }
  return p;
}

std::string stepPlanError(const TrainConfig& config, const StepPlan& plan) {
  if (plan.totalSteps <= kMaxPlannedSteps) return "";
  return "train.epochs " + std::to_string(config.train.epochs) + " of " + std::to_string(plan.stepsPerEpoch) +
         " optimizer steps each plan " +
         (plan.totalSteps == std::numeric_limits<int64_t>::max() ? std::string("more than 9e18")
                                                                 : std::to_string(plan.totalSteps)) +
         " steps, more than the " + std::to_string(kMaxPlannedSteps) +
         " a run may plan (no machine finishes them): lower train.epochs, or set train.max_steps";
}

std::string schedulePlanError(const ScheduleConfig& c, int64_t totalSteps, const std::string& where) {
  if (c.kind != ScheduleKind::onecycle) return "";
  const int64_t total = c.onecycle.total_steps > 0 ? c.onecycle.total_steps : totalSteps;
  if (c.onecycle.pct_start * static_cast<double>(total) > 1.0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", c.onecycle.pct_start);
  return where + ".onecycle.pct_start " + buf + " of " + std::to_string(total) +
         " steps leaves the warm-up at most one step (PyTorch's OneCycleLR divides by zero there): raise "
         "pct_start, train for more steps, or choose another schedule";
}

RunSchedule::RunSchedule(const ScheduleConfig& config, double baseLr, int64_t baseTotal,
                         std::vector<ScheduleExtension> extensions, double defaultMomentum)
    : m_base(config, baseLr, baseTotal), m_extensions(std::move(extensions)), m_defaultMomentum(defaultMomentum) {
  m_cycles = m_base.momentum(0).has_value();
  for (const auto& e : m_extensions) {
    m_restarts.emplace_back(e.schedule, e.lr, e.to - e.from);
    if (e.how == ContinueSchedule::restart && m_restarts.back().momentum(0)) m_cycles = true;
  }
}

int RunSchedule::part(int64_t step) const {
  for (int i = static_cast<int>(m_extensions.size()) - 1; i >= 0; --i)
    if (step >= m_extensions[static_cast<size_t>(i)].from) return i;
  return -1;
}

double RunSchedule::lr(int64_t step) const {
  const int i = part(step);
  if (i < 0) return m_base.lr(step);
  const auto& e = m_extensions[static_cast<size_t>(i)];
  return e.how == ContinueSchedule::constant ? e.lr : m_restarts[static_cast<size_t>(i)].lr(step - e.from);
}

std::optional<double> RunSchedule::momentum(int64_t step) const {
  if (!m_cycles) return std::nullopt;
  const int i = part(step);
  std::optional<double> m;
  if (i < 0) {
    m = m_base.momentum(step);
  } else {
    const auto& e = m_extensions[static_cast<size_t>(i)];
    // A constant part keeps the momentum the run had when it began.
    m = e.how == ContinueSchedule::constant ? (e.from > 0 ? momentum(e.from - 1) : std::nullopt)
                                            : m_restarts[static_cast<size_t>(i)].momentum(step - e.from);
  }
  return m ? m : std::optional<double>(m_defaultMomentum);
}

}  // namespace studio
