#pragma once
// The training loop of one run, on the engine thread: data, model, autocast,
// loss scaling, accumulation, clipping, the fused optimizer, the schedule,
// evaluation, metrics and checkpoints. The Session owns the thread; the
// Trainer talks to the front-end only through the SessionChannel.
// Thread: constructed and run on the engine thread.

#include <memory>
#include <string>

#include "studio/session.h"
#include "studio/train_config.h"
#include "train/session_channel.h"

namespace studio {

class Trainer {
 public:
  // resume: continue runDir from checkpoints/last.ckpt.
  Trainer(TrainConfig config, std::string runDir, bool resume, StartOptions options, SessionChannel& channel);
  ~Trainer();
  // Trains to the end, a stop, or an error; never throws. Writes
  // summary.json and returns the same figures.
  RunSummary run();

 private:
  struct State;
  std::unique_ptr<State> m_s;
};

}  // namespace studio
