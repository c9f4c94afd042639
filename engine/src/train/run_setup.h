#pragma once
// A run's set-up: the device (and the rank under torchrun), the data, the
// model, optimizer and loader, the callbacks and services, then how the run
// starts (fresh, resume, continue, fork, or a probe), the schedule's plan
// and the step runner. Writes settings.json first, so a run that fails on
// its data still records what it was.
// Thread: engine thread.

#include "train/run_context.h"

namespace studio {

void setupRun(RunContext& ctx);

}  // namespace studio
