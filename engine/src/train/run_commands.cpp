#include "train/run_commands.h"

#include <cmath>

#include "run/run_recorder.h"
#include "studio/log.h"
#include "train/checkpoints.h"
#include "train/metric_window.h"
#include "train/run_origin.h"

namespace studio {
namespace {

void setLearningRate(RunContext& c, double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) {
    log::warn("ignored a learning-rate change to " + fmt(lr) + ": it must be > 0");
    return;
  }
  c.window->flush();
  const double scheduled = c.parts.schedule->lr(c.position.step);
  c.lr.multiplier = lr / scheduled;
  c.lr.changes.push_back({{"step", c.position.step}, {"lr", lr}, {"multiplier", c.lr.multiplier}});
  MetricRecord r = c.record(RecordKind::LrChange);
  r.lr = lr;
  c.post(r);
  writeRunSettings(c);
  log::info("learning rate set to " + fmt(lr) + " at step " + std::to_string(c.position.step) +
            " (the schedule continues, scaled by " + fmt(c.lr.multiplier) + ")");
}

}  // namespace

void pollCommands(RunContext& c) {
  LoopControl& control = c.control;
  bool waited = false;
  for (;;) {
    Command cmd;
    while (c.ch.commands.try_dequeue(cmd)) {
      switch (cmd.type) {
        case Command::Pause:
          if (!control.paused) {
            c.window->flush();
            if (c.recorder) c.recorder->flush();
            log::info("paused at step " + std::to_string(c.position.step));
          }
          control.paused = true;
          c.ch.state = SessionState::Paused;
          break;
        case Command::Resume:
          if (control.paused) log::info("resumed at step " + std::to_string(c.position.step));
          control.paused = false;
          c.ch.state = SessionState::Running;
          break;
        case Command::Stop:
          control.stopRequested = true;
          control.paused = false;
          break;
        case Command::SaveNow:
          c.window->flush();
          c.checkpoints->save(false);
          log::info("checkpoint saved at step " + std::to_string(c.position.step));
          ++c.ch.checkpointsSaved;
          break;
        case Command::SetLr:
          setLearningRate(c, cmd.value);
          break;
      }
    }
    if (!control.paused) break;
    std::unique_lock<std::mutex> lock(c.ch.wakeMutex);
    c.ch.wake.wait(lock, [&] { return c.ch.commands.peek() != nullptr; });
    waited = true;
  }
  if (waited) c.window->restart();  // paused time is not training time
}

}  // namespace studio
