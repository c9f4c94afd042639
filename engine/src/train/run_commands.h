#pragma once
// The front-end's commands (pause, resume, stop, save now, set the learning
// rate), applied between steps. Blocks on the channel's condition variable
// while paused.
// Thread: engine thread.

#include "train/run_context.h"

namespace studio {

void pollCommands(RunContext& ctx);

}  // namespace studio
