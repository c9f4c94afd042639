#pragma once
// One run on the engine thread: sets it up (run_setup), picks its loop (the
// training loop, or a probe), and writes its summary. The Session owns the
// thread; the run talks to the front-end only through the SessionChannel.
// Where each part lives: run_context.h (the state), step_runner.h (the
// step), train_loop.h, callbacks/, probes/, tasks/.
// Thread: constructed and run on the engine thread.

#include <memory>
#include <string>

#include "studio/session.h"
#include "studio/train_config.h"
#include "train/run_start.h"
#include "train/session_channel.h"

namespace studio {

struct RunContext;

class Trainer {
 public:
  Trainer(TrainConfig config, std::string runDir, RunStart start, StartOptions options, SessionChannel& channel);
  ~Trainer();
  // Trains to the end, a stop, or an error; never throws. Writes
  // summary.json and returns the same figures.
  RunSummary run();

 private:
  std::unique_ptr<RunContext> m_ctx;
};

}  // namespace studio
