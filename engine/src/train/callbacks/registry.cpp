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

#define STUDIO_DECLARE(make) std::unique_ptr<TrainCallback> make(RunContext&);
STUDIO_TRAIN_CALLBACKS(STUDIO_DECLARE)
#undef STUDIO_DECLARE

std::unique_ptr<CallbackList> makeCallbacks(RunContext& ctx) {
  std::vector<std::unique_ptr<TrainCallback>> list;
#define STUDIO_ADD(make) \
  if (auto c = make(ctx)) list.push_back(std::move(c));
  STUDIO_TRAIN_CALLBACKS(STUDIO_ADD)
#undef STUDIO_ADD
  return std::make_unique<CallbackList>(std::move(list));
}

CallbackList::CallbackList(std::vector<std::unique_ptr<TrainCallback>> callbacks) : m_callbacks(std::move(callbacks)) {}

void CallbackList::onTrainStart(RunContext& ctx) {
  for (auto& c : m_callbacks) c->onTrainStart(ctx);
}
void CallbackList::onStepEnd(RunContext& ctx) {
  for (auto& c : m_callbacks) c->onStepEnd(ctx);
}
void CallbackList::onTrainRecord(RunContext& ctx, const MetricRecord& r, int64_t nonfinite) {
  for (auto& c : m_callbacks) c->onTrainRecord(ctx, r, nonfinite);
}
void CallbackList::onFlushed(RunContext& ctx) {
  for (auto& c : m_callbacks) c->onFlushed(ctx);
}
void CallbackList::onEvaluation(RunContext& ctx, bool validation, MetricRecord& r) {
  for (auto& c : m_callbacks) c->onEvaluation(ctx, validation, r);
}
void CallbackList::onEvaluated(RunContext& ctx, EvalVerdict& v) {
  for (auto& c : m_callbacks) c->onEvaluated(ctx, v);
}
void CallbackList::afterEvaluation(RunContext& ctx, const EvalVerdict& v) {
  for (auto& c : m_callbacks) c->afterEvaluation(ctx, v);
}
bool CallbackList::onStepChecked(RunContext& ctx) {
  bool moved = false;
  for (auto& c : m_callbacks) moved = c->onStepChecked(ctx) || moved;
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
  for (auto& c : m_callbacks) c->onContinue(ctx);
}
void CallbackList::onFinalTest(RunContext& ctx, RunSummary& s) {
  for (auto& c : m_callbacks) c->onFinalTest(ctx, s);
}
void CallbackList::onRunEnd(const RunContext& ctx, RunSummary& s) const {
  for (const auto& c : m_callbacks) c->onRunEnd(ctx, s);
}

}  // namespace studio
