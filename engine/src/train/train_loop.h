#pragma once
// The training loop: epochs, accumulation groups, the schedule, the step,
// evaluations and periodic checkpoints, commands, the ranks' agreement, and
// the callbacks' hooks between steps. The loader, step runner and services
// come from the run's context (run_setup).
// Thread: engine thread.

#include <vector>

#include "data/batch_loader.h"
#include "train/run_context.h"

namespace studio {

void trainLoop(RunContext& ctx);

// The next step's micro-batches from the loader: accumulation_steps of
// them, fewer at an epoch's end. `samples`: their examples (of all ranks);
// `full`: k whole batches, the shape every other step has.
std::vector<Batch> nextGroup(RunContext& ctx, int64_t& samples, bool& full);
// After a step: moves the position to the next epoch when this one is
// done; true then.
bool closeEpochIfDone(RunContext& ctx);

}  // namespace studio
