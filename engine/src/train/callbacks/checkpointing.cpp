// The checkpoints at evaluations: last.ckpt always, best.ckpt when the
// evaluation is the best (by early stopping's metric when it is on, else by
// the task's score with output.save_best: accuracy, a regression's R², a
// multi-label's mAP).
// Its best score is in the checkpoints.
#include <cmath>
#include <limits>

#include "studio/metric_catalog.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"

namespace studio {
namespace {

class Checkpointing : public TrainCallback {
 public:
  void onEvaluated(CallbackView& ctx, EvalVerdict& v) override {
    const double score = v.figures[taskScoreMetric(ctx.cfg().task.kind.value())];
    const bool betterAccuracy = !std::isnan(score) && (m_bestAccuracy == kNoneYet || score > m_bestAccuracy);
    if (betterAccuracy) m_bestAccuracy = score;
    const bool best = v.improvedByMetric.value_or(ctx.cfg().output.save_best && betterAccuracy);
    ctx.checkpoints().save(best, /*atEvaluation=*/true);
  }
  void save(CheckpointState& state) const override { state.bestAccuracy = m_bestAccuracy; }
  void load(const CheckpointState& state) override { m_bestAccuracy = state.bestAccuracy; }
  void onRunEnd(const CallbackView& ctx, RunSummary& s) const override {
    const auto& task = ctx.cfg().task.kind;
    const bool none = m_bestAccuracy == kNoneYet || (task == TaskKind::classification && m_bestAccuracy < 0);
    s.bestEval.set(taskScoreMetric(task.value()), none ? MetricRecord::kNone : m_bestAccuracy);
  }

 private:
  // No evaluation yet (an R² may be below any number but this).
  static constexpr double kNoneYet = -std::numeric_limits<double>::infinity();
  double m_bestAccuracy = kNoneYet;
};

}  // namespace

std::unique_ptr<TrainCallback> makeCheckpointing(CallbackView&) { return std::make_unique<Checkpointing>(); }

}  // namespace studio
