// train.early_stopping: ends the run when its metric has not improved for
// `patience` evaluations; the best checkpoint is then the best by that
// metric. Its best value, step and count are in the checkpoints.
#include <cmath>
#include <limits>

#include "studio/log.h"
#include "studio/metric_catalog.h"
#include "train/callbacks/train_callback.h"

namespace studio {
namespace {

constexpr const char* kBest = "early_stopping.best";
constexpr const char* kBestStep = "early_stopping.best_step";
constexpr const char* kBadEvals = "early_stopping.bad_evals";

// The best value of its metric so far (NaN: none yet), the step it came at,
// and the evaluations since without improvement.
struct EarlyStoppingState {
  double best = std::numeric_limits<double>::quiet_NaN();
  int64_t bestStep = 0;
  int64_t badEvals = 0;
};

class EarlyStopping : public TrainCallback {
 public:
  explicit EarlyStopping(const EarlyStoppingConfig& config) : m_cfg(config) {}

  // Counts the evaluation; the best checkpoint follows its judgement.
  void onEvaluated(CallbackView& ctx, EvalVerdict& v) override {
    const double value = v.figures[m_cfg.metric];
    const double best = m_state.best;
    const bool improved =
        std::isfinite(value) &&
        (std::isnan(best) || (minimises() ? value < best - m_cfg.min_delta : value > best + m_cfg.min_delta));
    if (improved) {
      m_state.best = value;
      m_state.bestStep = ctx.position().step;
      m_state.badEvals = 0;
    } else {
      ++m_state.badEvals;
    }
    v.improvedByMetric = improved;
  }

  // After the checkpoints of this evaluation are written.
  void afterEvaluation(CallbackView& ctx, const EvalVerdict& v) override {
    if (m_state.badEvals < m_cfg.patience || ctx.position().step >= ctx.totalSteps()) return;
    const std::string what = std::string(v.validation ? "validation " : "test ") + m_cfg.metric.substr(5);
    ctx.control().earlyStopReason =
        what + " has not improved" + (m_cfg.min_delta > 0 ? " by more than " + fmt(m_cfg.min_delta) : std::string()) +
        " for " + std::to_string(m_state.badEvals) + " evaluations (train.early_stopping.patience " +
        std::to_string(m_cfg.patience) + "); best " + fmt(m_state.best) + " at step " +
        std::to_string(m_state.bestStep) + ", kept in checkpoints/best.ckpt";
    ctx.control().stopRequested = true;
    ctx.post(ctx.record(RecordKind::EarlyStop));
    log::info("early stop at step " + std::to_string(ctx.position().step) + ": " + ctx.control().earlyStopReason);
  }

  // Its figures in the checkpoint's callbackFigures (run/checkpoint.cpp
  // keeps them where checkpoints always had them).
  void save(CheckpointState& state) const override {
    state.callbackFigures[kBest] = m_state.best;
    state.callbackFigures[kBestStep] = static_cast<double>(m_state.bestStep);
    state.callbackFigures[kBadEvals] = static_cast<double>(m_state.badEvals);
  }
  void load(const CheckpointState& state) override {
    auto figure = [&](const char* name, double absent) {
      const auto it = state.callbackFigures.find(name);
      return it != state.callbackFigures.end() ? it->second : absent;
    };
    m_state.best = figure(kBest, std::numeric_limits<double>::quiet_NaN());
    m_state.bestStep = static_cast<int64_t>(figure(kBestStep, 0));
    m_state.badEvals = static_cast<int64_t>(figure(kBadEvals, 0));
  }
  void onContinue(CallbackView&) override { m_state.badEvals = 0; }  // counts afresh

  void onRunEnd(const CallbackView& ctx, RunSummary& s) const override {
    s.earlyStopping.metric = m_cfg.metric;
    s.earlyStopping.best = m_state.best;
    s.earlyStopping.bestStep = m_state.bestStep;
    s.earlyStopping.reason = ctx.control().earlyStopReason;
  }

 private:
  bool minimises() const {
    if (m_cfg.mode != BetterIs::auto_) return m_cfg.mode == BetterIs::min;
    return lowerIsBetter(m_cfg.metric);  // the metric catalog's judgement
  }
  EarlyStoppingConfig m_cfg;
  EarlyStoppingState m_state;
};

}  // namespace

std::unique_ptr<TrainCallback> makeEarlyStopping(CallbackView& ctx) {
  if (ctx.cfg().train.early_stopping.metric == "off") return nullptr;
  return std::make_unique<EarlyStopping>(ctx.cfg().train.early_stopping);
}

}  // namespace studio
