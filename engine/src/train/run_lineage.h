#pragma once
// How a run descends from another: the checks and settings of a fork (a new
// run from another run's checkpoint with edited settings) and of a
// continuation (more epochs for a run, in its own folder). Everything here
// runs before a folder is made or a thread starts, so bad input leaves
// nothing behind.
// Thread: the front-end's.

#include <string>

#include <nlohmann/json.hpp>

#include "studio/session.h"
#include "train/run_start.h"

namespace studio {

struct ForkPlan {
  TrainConfig config;      // the parent's settings with the overrides
  std::string checkpoint;  // the parent's checkpoint file
  nlohmann::json parent;   // run_info.parent
};
// Throws InputError naming what is wrong: no such run or checkpoint, a
// checkpoint that does not fit the parent's model, an override of the model
// or the data, settings that do not validate, a changed batch size at a
// checkpoint in the middle of an epoch.
ForkPlan planFork(const std::string& parentDir, const ForkOptions& options);

// The settings of a run folder that can go on from its last checkpoint
// (resume, continue): throws std::invalid_argument naming the folder when it
// or its checkpoints/last.ckpt is missing, InvalidSettings when its
// settings.json does not validate. `verb` says what for ("resume").
// With fromStart, a run without a checkpoint yet (killed in its first steps)
// is resumable from its start: *fromStart says so. A fork without one is not
// (its start is its parent's checkpoint): the message says to fork again.
TrainConfig readResumableRun(const std::string& runDir, const std::string& verb, bool* fromStart = nullptr);

// The run's settings and what to add; throws InputError as above (and as
// readResumableRun for the folder).
std::pair<TrainConfig, run_start::Continue> planContinue(const std::string& runDir, const ContinueOptions& options);

}  // namespace studio
