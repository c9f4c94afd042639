#include "train/callbacks/callback_view.h"

#include "train/run_context.h"
#include "train/run_origin.h"

namespace studio {

const TrainConfig& CallbackView::cfg() const { return m_ctx.cfg; }
const RunPosition& CallbackView::position() const { return m_ctx.position; }
int64_t CallbackView::totalSteps() const { return m_ctx.steps.totalSteps; }
const std::string& CallbackView::runDir() const { return m_ctx.runDir; }
double CallbackView::lrAt(int64_t step) const { return m_ctx.lrAt(step); }
const LoopControl& CallbackView::control() const { return m_ctx.control; }
LoopControl& CallbackView::control() { return m_ctx.control; }
LrAdjustments& CallbackView::lr() { return m_ctx.lr; }
Model& CallbackView::model() { return *m_ctx.parts.model; }
Optimizer& CallbackView::optimizer() { return *m_ctx.parts.optimizer; }
nlohmann::json& CallbackView::finetuneInfo() { return m_ctx.parts.finetune; }
torch::Tensor& CallbackView::nonfiniteSteps() { return m_ctx.nonfinite; }
Evaluation& CallbackView::evaluation() { return *m_ctx.evaluation; }
Checkpoints& CallbackView::checkpoints() { return *m_ctx.checkpoints; }
MetricWindow& CallbackView::window() { return *m_ctx.window; }
RunRecorder* CallbackView::recorder() { return m_ctx.recorder.get(); }
MetricRecord CallbackView::record(RecordKind kind) const { return m_ctx.record(kind); }
void CallbackView::post(const MetricRecord& r) { m_ctx.post(r); }
void CallbackView::showPosition() { m_ctx.showPosition(); }
void CallbackView::writeSettings() { writeRunSettings(m_ctx); }

}  // namespace studio
