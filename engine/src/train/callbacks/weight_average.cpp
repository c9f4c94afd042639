// train.ema: the weights' exponential moving average, updated after the
// steps the settings name, evaluated beside the weights at each evaluation
// and at the end, and kept in the checkpoints (its "ema" part).
#include "models/model.h"
#include "optim/ema_weights.h"
#include "run/checkpoint.h"
#include "studio/log.h"
#include "train/callbacks/train_callback.h"
#include "train/evaluation.h"

namespace studio {
namespace {

class WeightAverage : public TrainCallback {
 public:
  explicit WeightAverage(double decay) : m_ema(decay) {}

  void onStepEnd(CallbackView& ctx) override {
    const auto& e = ctx.cfg().train.ema;
    const int64_t step = ctx.position().step;
    if (step >= e.start_step && (step - e.start_step) % e.every_steps == 0) m_ema.update(ctx.model());
  }

  void onEvaluation(CallbackView& ctx, bool validation, MetricRecord& r) override {
    if (!m_ema.started()) return;
    const Figures avg = evaluate(ctx, validation);
    r.emaEvalLoss = avg["eval_loss"];
    r.emaEvalAccuracy = avg["eval_accuracy"];
    log::info("step " + std::to_string(ctx.position().step) + " weight average (EMA of " +
              std::to_string(m_ema.updates()) + " updates): loss " + fmt(avg["eval_loss"]) + " accuracy " +
              fmt(avg["eval_accuracy"]));
  }

  void onFinalTest(CallbackView& ctx, RunSummary& s) override {
    if (!m_ema.started()) return;
    const Figures avg = evaluate(ctx, false);
    for (const char* id : {"eval_accuracy", "eval_loss"}) s.test.ema.set(id, avg[id]);
    log::info("weight average (EMA): test accuracy " + fmt(avg["eval_accuracy"]) + ", test loss " +
              fmt(avg["eval_loss"]));
  }

  void addTo(CheckpointParts& parts) override { parts.ema = &m_ema; }

 private:
  // Loss and accuracy of the average (the model holds it meanwhile).
  Figures evaluate(CallbackView& ctx, bool validation) {
    EmaWeights::Swap swap(m_ema, ctx.model());
    return ctx.evaluation().figures(validation, "evaluating the weight average");
  }

  EmaWeights m_ema;
};

}  // namespace

std::unique_ptr<TrainCallback> makeWeightAverage(CallbackView& ctx) {
  if (!(ctx.cfg().train.ema.decay > 0)) return nullptr;
  return std::make_unique<WeightAverage>(ctx.cfg().train.ema.decay);
}

}  // namespace studio
