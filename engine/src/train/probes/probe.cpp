#include "train/probes/probe.h"

#include "train/step/step_runner.h"

namespace studio {

void Probe::begin(const std::string& graphs, int64_t plannedSteps) {
  m_ctx.stepper->graphsOff(graphs);
  m_ctx.ch.totalSteps = plannedSteps;
  m_ctx.ch.state = SessionState::Running;
}

std::unique_ptr<Probe> makeLrFind(RunContext& ctx, const LrFindOptions& options);
std::unique_ptr<Probe> makeBatchFind(RunContext& ctx, const BatchFindOptions& options);

std::unique_ptr<Probe> makeProbe(RunContext& ctx) {
  if (const auto* p = ctx.start.as<run_start::LrFind>()) return makeLrFind(ctx, p->options);
  if (const auto* p = ctx.start.as<run_start::BatchFind>()) return makeBatchFind(ctx, p->options);
  return nullptr;
}

}  // namespace studio
