#pragma once
// How a run ended, and an exception turned into the message a person reads
// (what failed, where, what to change), in one place.
// Thread: engine thread.

#include <string>

#include "studio/run_summary.h"
#include "train/run_context.h"

namespace studio {

struct RunEnding {
  RunEnding(RunStatus how = RunStatus::completed, std::string message = {}) : end(how), error(std::move(message)) {}
  RunStatus end;          // summary.json's status
  std::string error;      // a failure's message
  bool badInput = false;  // the person's settings or files (the CLI exits 2)
};

// The exception being handled (call inside a catch block).
RunEnding describeFailure(const RunContext& ctx);

}  // namespace studio
