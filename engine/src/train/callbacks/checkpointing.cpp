// The checkpoints at evaluations: last.ckpt always, best.ckpt when the
// evaluation is the best (by early stopping's metric when it is on, else by
// accuracy with output.save_best). Its best accuracy is in the checkpoints.
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"

namespace studio {
namespace {

class Checkpointing : public TrainCallback {
 public:
  void onEvaluated(RunContext& ctx, EvalVerdict& v) override {
    const double accuracy = v.figures.accuracy;
    const bool betterAccuracy = !(accuracy <= m_bestAccuracy);
    if (betterAccuracy) m_bestAccuracy = accuracy;
    const bool best = v.improvedByMetric.value_or(ctx.cfg.output.save_best && betterAccuracy);
    ctx.checkpoints->save(best, /*atEvaluation=*/true);
  }
  void save(CheckpointState& state) const override { state.bestAccuracy = m_bestAccuracy; }
  void load(const CheckpointState& state) override { m_bestAccuracy = state.bestAccuracy; }
  void onRunEnd(const RunContext&, RunSummary& s) const override {
    s.bestEvalAccuracy = m_bestAccuracy < 0 ? MetricRecord::kNone : m_bestAccuracy;
  }

 private:
  double m_bestAccuracy = -1;
};

}  // namespace

std::unique_ptr<TrainCallback> makeCheckpointing(RunContext&) { return std::make_unique<Checkpointing>(); }

}  // namespace studio
