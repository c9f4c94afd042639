#include "train/probes/probe.h"

namespace studio {

std::unique_ptr<Probe> makeLrFind(RunContext& ctx, const LrFindOptions& options);
std::unique_ptr<Probe> makeBatchFind(RunContext& ctx, const BatchFindOptions& options);

std::unique_ptr<Probe> makeProbe(RunContext& ctx) {
  if (const auto* p = ctx.start.as<run_start::LrFind>()) return makeLrFind(ctx, p->options);
  if (const auto* p = ctx.start.as<run_start::BatchFind>()) return makeBatchFind(ctx, p->options);
  return nullptr;
}

}  // namespace studio
