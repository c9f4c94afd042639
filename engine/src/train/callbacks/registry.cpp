// The callbacks and their order (train_callback.h says why this one). Each
// make function returns nullptr when its settings leave it off.
#include "train/callbacks/train_callback.h"

namespace studio {

#define STUDIO_TRAIN_CALLBACKS(X) \
  X(makeWeightAverage)            \
  X(makeNonfinitePolicy)          \
  X(makeEarlyStopping)            \
  X(makeCheckpointing)            \
  X(makeHeapTrim)                 \
  X(makeFinetune)

#define STUDIO_DECLARE(make) std::unique_ptr<TrainCallback> make(CallbackView&);
STUDIO_TRAIN_CALLBACKS(STUDIO_DECLARE)
#undef STUDIO_DECLARE

std::unique_ptr<CallbackList> makeCallbacks(RunContext& ctx) {
  std::vector<std::unique_ptr<TrainCallback>> list;
  CallbackView view(ctx);
#define STUDIO_ADD(make) \
  if (auto c = make(view)) list.push_back(std::move(c));
  STUDIO_TRAIN_CALLBACKS(STUDIO_ADD)
#undef STUDIO_ADD
  return std::make_unique<CallbackList>(std::move(list));
}

CallbackList::CallbackList(std::vector<std::unique_ptr<TrainCallback>> callbacks) : m_callbacks(std::move(callbacks)) {}

void CallbackList::onTrainStart(RunContext& ctx) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onTrainStart(view);
}
void CallbackList::onStepEnd(RunContext& ctx) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onStepEnd(view);
}
void CallbackList::onTrainRecord(RunContext& ctx, const MetricRecord& r, int64_t nonfinite) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onTrainRecord(view, r, nonfinite);
}
void CallbackList::onFlushed(RunContext& ctx) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onFlushed(view);
}
void CallbackList::onEvaluation(RunContext& ctx, bool validation, MetricRecord& r) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onEvaluation(view, validation, r);
}
void CallbackList::onEvaluated(RunContext& ctx, EvalVerdict& v) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onEvaluated(view, v);
}
void CallbackList::afterEvaluation(RunContext& ctx, const EvalVerdict& v) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->afterEvaluation(view, v);
}
bool CallbackList::onStepChecked(RunContext& ctx) {
  bool moved = false;
  CallbackView view(ctx);
  for (auto& c : m_callbacks) moved = c->onStepChecked(view) || moved;
  return moved;
}
void CallbackList::addTo(CheckpointParts& parts) {
  for (auto& c : m_callbacks) c->addTo(parts);
}
void CallbackList::save(CheckpointState& state) const {
  for (const auto& c : m_callbacks) c->save(state);
}
void CallbackList::load(const CheckpointState& state) {
  for (auto& c : m_callbacks) c->load(state);
}
void CallbackList::onContinue(RunContext& ctx) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onContinue(view);
}
void CallbackList::onFinalTest(RunContext& ctx, RunSummary& s) {
  CallbackView view(ctx);
  for (auto& c : m_callbacks) c->onFinalTest(view, s);
}
void CallbackList::onRunEnd(const RunContext& ctx, RunSummary& s) const {
  const CallbackView view(const_cast<RunContext&>(ctx));  // read only: onRunEnd takes it const
  for (const auto& c : m_callbacks) c->onRunEnd(view, s);
}

}  // namespace studio
