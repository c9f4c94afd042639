#pragma once
// How a run ended, and an exception turned into the message a person reads
// (what failed, where, what to change), in one place.
// Thread: engine thread.

#include <string>

#include "train/run_context.h"

namespace studio {

enum class RunEnd { Completed, Stopped, EarlyStopped, Failed };

// summary.json's status ("completed", "stopped", "early-stopped", "failed").
const char* statusText(RunEnd end);

struct RunEnding {
  RunEnding(RunEnd how = RunEnd::Completed, std::string message = {}) : end(how), error(std::move(message)) {}
  RunEnd end;
  std::string error;      // a failure's message
  bool badInput = false;  // the person's settings or files (the CLI exits 2)
};

// The exception being handled (call inside a catch block).
RunEnding describeFailure(const RunContext& ctx);

}  // namespace studio
