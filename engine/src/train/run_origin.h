#pragma once
// Where a run comes from and what it records of it: resume from its own
// checkpoint, a fork from another run's, a continuation's extra steps, the
// schedule's plan over them, and settings.json's run_info (the lineage).
// Thread: engine thread.

#include <nlohmann/json.hpp>

#include "train/run_context.h"

namespace studio {

// The run's last checkpoint, whole; `stored`: its run_info (the lineage).
void resumeRun(RunContext& ctx, const nlohmann::json& stored);
// The parent's weights, position and random state; its optimizer state
// when the optimizer is the same kind; everything else afresh.
void startFork(RunContext& ctx, const run_start::Fork& fork);
// The schedule and the number of steps: the settings' plan (moved by a
// fork's step shift), then the continuations.
void planSchedule(RunContext& ctx);
// training-studio-cli continue: more epochs after the plan's end (or after
// the checkpoint, for an early-stopped run).
void continueRun(RunContext& ctx, const run_start::Continue& more);
// settings.json: the settings and run_info (data, model, lineage, changes).
void writeRunSettings(RunContext& ctx);

}  // namespace studio
