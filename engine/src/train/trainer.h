#pragma once
// The training loop of one run, on the engine thread: data, model, autocast,
// loss scaling, accumulation, clipping, the fused optimizer, the schedule,
// evaluation, metrics and checkpoints. The Session owns the thread; the
// Trainer talks to the front-end only through the SessionChannel.
// Thread: constructed and run on the engine thread.

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "studio/session.h"
#include "studio/train_config.h"
#include "train/session_channel.h"

namespace studio {

// How a run begins: fresh, from its own last checkpoint (resume, and
// continue, which first adds more steps), or from another run's checkpoint
// (fork).
struct RunStart {
  bool resume = false;  // runDir's checkpoints/last.ckpt
  struct Extend {
    int64_t epochs = 0;           // more epochs
    std::string how = "restart";  // restart | constant
    ScheduleConfig schedule;      // restart: the schedule started again
    double lr = 0;                // 0: restart, optimizer.lr; constant, the last learning rate
    bool fromHere = false;        // from the checkpoint's step (an early-stopped run), not the plan's end
  };
  std::optional<Extend> extend;   // continue
  std::optional<LrFindOptions> lrFind;  // a learning-rate range test instead of training
  std::optional<BatchFindOptions> batchFind;  // the largest micro-batch instead of training
  std::string forkCheckpoint;     // fork: the parent's checkpoint file
  nlohmann::json parent;          // fork: run_info.parent
};

class Trainer {
 public:
  Trainer(TrainConfig config, std::string runDir, RunStart start, StartOptions options, SessionChannel& channel);
  ~Trainer();
  // Trains to the end, a stop, or an error; never throws. Writes
  // summary.json and returns the same figures.
  RunSummary run();

 private:
  struct State;
  std::unique_ptr<State> m_s;
};

}  // namespace studio
