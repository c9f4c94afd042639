// train.on_nonfinite: a step whose loss or gradients were not finite (seen
// at a flush; the step itself was never applied) is recorded and logged,
// then stops the run, is skipped, or rolls the run back to its last
// checkpoint with the learning rate scaled down. Its counts are in the
// checkpoints.
#include <filesystem>

#include "run/run_recorder.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/metric_window.h"
#include "train/run_origin.h"

namespace studio {
namespace {

class NonfinitePolicy : public TrainCallback {
 public:
  explicit NonfinitePolicy(const CallbackView& run) : m_view(run) {}

  void onTrainRecord(CallbackView& ctx, const MetricRecord& row, int64_t count) override {
    if (count <= m_counts.steps) return;
    m_counts.steps = count;
    MetricRecord r;
    r.kind = RecordKind::NonFinite;
    r.step = row.step;
    r.epoch = row.epoch;
    r.wallSeconds = row.wallSeconds;
    r.trainLoss = row.trainLoss;
    r.lr = row.lr;
    ctx.post(r);
    m_lastStep = row.step;
    const auto& policy = ctx.cfg().train.on_nonfinite;
    if (count <= 10 || count % 100 == 0)
      log::warn("step " + std::to_string(row.step) + ": the loss or the gradients are not finite (loss " +
                fmt(row.trainLoss) + ", learning rate " + fmt(row.lr) + "); the step was not applied" +
                (policy == OnNonfinite::skip ? " (train.on_nonfinite skip)" : "") +
                (count == 10 ? "; further ones are logged every 100th" : ""));
    if (policy == OnNonfinite::stop) {
      if (!ctx.control().divergedAt) ctx.control().divergedAt = row.step;  // the first one
      ctx.control().stopRequested = true;
    } else if (policy == OnNonfinite::rollback) {
      ctx.control().rollbackDue = true;
    }
  }

  bool onStepChecked(CallbackView& ctx) override {
    if (!ctx.control().rollbackDue) return false;
    ctx.window().flush();
    rollback(ctx);
    return true;
  }

  void save(CheckpointState& state) const override { state.nonfinite = m_counts; }
  void load(const CheckpointState& state) override {
    m_counts = state.nonfinite;
    m_view.nonfiniteSteps().fill_(static_cast<double>(m_counts.steps));
    if (m_counts.rollbacks > 0) m_view.control().rolledBack = true;
  }
  void onRunEnd(const CallbackView&, RunSummary& s) const override {
    s.nonfinite.steps = m_counts.steps;
    s.nonfinite.rollbacks = m_counts.rollbacks;
  }

 private:
  // Back to the last checkpoint with the learning rate scaled down; the
  // rows after it no longer stand.
  void rollback(CallbackView& ctx) {
    ctx.control().rollbackDue = false;
    const TrainingConfig& t = ctx.cfg().train;
    const std::string path = ctx.runDir() + "/" + run_files::kLastCheckpoint;
    if (m_counts.rollbacks >= t.max_rollbacks || !std::filesystem::exists(path)) {
      log::error(m_counts.rollbacks >= t.max_rollbacks
                     ? "the loss is still not finite after " + std::to_string(m_counts.rollbacks) +
                           " rollback(s) (train.max_rollbacks); stopping"
                     : "the loss is not finite and there is no checkpoint yet to roll back to; stopping");
      ctx.control().divergedAt = m_lastStep;
      ctx.control().stopRequested = true;
      return;
    }
    const NonfiniteCounts now{m_counts.steps, m_counts.rollbacks + 1};
    const nlohmann::json lrChanges = ctx.lr().changes;
    ctx.checkpoints().load(path);
    m_counts = now;
    ctx.nonfiniteSteps().fill_(static_cast<double>(m_counts.steps));
    ctx.control().rolledBack = true;
    ctx.lr().multiplier *= t.rollback_lr_factor;
    const double lr = ctx.lrAt(ctx.position().step);
    ctx.lr().changes = lrChanges;
    ctx.lr().changes.push_back(
        {{"step", ctx.position().step}, {"lr", lr}, {"multiplier", ctx.lr().multiplier}, {"rollback", now.rollbacks}});
    if (ctx.recorder()) ctx.recorder()->truncateAfter(ctx.position().step);
    MetricRecord r = ctx.record(RecordKind::Rollback);
    r.lr = lr;
    ctx.post(r);
    ctx.writeSettings();
    ctx.showPosition();
    log::warn("rolled back to the checkpoint of step " + std::to_string(ctx.position().step) + " (rollback " +
              std::to_string(now.rollbacks) + " of at most " + std::to_string(t.max_rollbacks) +
              "); the learning rate is scaled by " + fmt(ctx.lr().multiplier) + ", now " + fmt(lr));
    ctx.window().restart();
  }

  CallbackView m_view;  // load() has no view of its own
  NonfiniteCounts m_counts;
  int64_t m_lastStep = 0;
};

}  // namespace

std::unique_ptr<TrainCallback> makeNonfinitePolicy(CallbackView& ctx) { return std::make_unique<NonfinitePolicy>(ctx); }

}  // namespace studio
