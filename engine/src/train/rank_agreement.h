#pragma once
// Under torchrun: what the ranks do together between steps. Each is a
// collective (every rank calls it at the same step); alone they do nothing.
// Thread: engine thread.

#include "train/run_context.h"

namespace studio {

// Each rank's BatchNorm statistics come from its own share of the batches;
// before an evaluation and the checkpoints they are averaged over the
// ranks, so that every rank, and the saved model, holds the same ones.
void syncBatchNormStatistics(RunContext& ctx);

// A stop (a signal, early stopping, a non-finite policy) or a rollback seen
// by any rank is made by all at the same step, so their exchanges stay in
// step. One small all-reduce on the host per step.
void agreeWithOtherRanks(RunContext& ctx);

}  // namespace studio
