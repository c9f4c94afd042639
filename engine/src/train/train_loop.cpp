#include "train/train_loop.h"

#include <stdexcept>

#include "run/crash_point.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/evaluation.h"
#include "train/metric_window.h"
#include "train/rank_agreement.h"
#include "train/run_commands.h"
#include "train/step/step_runner.h"

namespace studio {

std::vector<Batch> nextGroup(RunContext& c, int64_t& samples, bool& full) {
  BatchLoader& loader = *c.data.loader;
  const int64_t k = c.cfg.train.accumulation_steps;
  const int64_t b = c.cfg.train.batch_size;
  const int64_t groupEnd = std::min(c.position.batchInEpoch + k, loader.batchesPerEpoch());
  samples = 0;
  full = groupEnd - c.position.batchInEpoch == k;
  std::vector<Batch> group;
  for (int64_t i = c.position.batchInEpoch; i < groupEnd; ++i) {
    Batch batch;
    if (!loader.next(batch)) throw std::logic_error("loader ended before its epoch");
    full = full && batch.size() == b;
    samples += batch.globalSize;
    group.push_back(std::move(batch));
  }
  c.position.batchInEpoch = groupEnd;
  return group;
}

bool closeEpochIfDone(RunContext& c) {
  if (c.position.batchInEpoch < c.data.loader->batchesPerEpoch()) return false;
  ++c.position.epoch;
  c.position.batchInEpoch = 0;
  c.ch.epoch = c.position.epoch;
  return true;
}

void trainLoop(RunContext& c) {
  RunPosition& at = c.position;
  LoopControl& control = c.control;
  const int64_t nb = c.data.loader->batchesPerEpoch();
  const int64_t& total = c.steps.totalSteps;
  const int64_t stopAt = c.options.stopAtStep > 0 ? c.options.stopAtStep : total;
  c.window->restart();
  c.ch.state = SessionState::Running;
  pollCommands(c);
  while (at.step < total && !control.stopRequested) {
    const int64_t stepBefore = at.step;
    c.data.loader->startEpoch(at.epoch, at.batchInEpoch);
    while (at.batchInEpoch < nb && at.step < total && !control.stopRequested) {
      int64_t samples = 0;
      bool full = false;
      std::vector<Batch> group = nextGroup(c, samples, full);
      const double lr = c.lrAt(at.step);
      const std::optional<double> momentum = c.parts.schedule->momentum(at.step);
      torch::Tensor figures = c.stepper->step({group, samples, lr, momentum, full});
      group.clear();
      c.window->add(std::move(figures), {at.step + 1, at.epoch, lr, samples, c.microBatch()});
      ++at.step;
      c.ch.step = at.step;
      c.callbacks->onStepEnd(c);

      if (c.window->size() >= static_cast<size_t>(c.cfg.train.log_every_steps)) c.window->flush();
      const bool epochDone = closeEpochIfDone(c);
      const int64_t every = c.cfg.evaluation.every_steps;
      const bool evalDue = every > 0 ? at.step % every == 0 : epochDone;
      const int64_t checkpointEvery = c.cfg.output.checkpoint_every_steps;
      if (evalDue || at.step == total) {
        c.evaluation->atStep();
      } else if (checkpointEvery > 0 && at.step % checkpointEvery == 0) {
        c.window->flush();
        syncBatchNormStatistics(c);
        c.checkpoints->save(false);
      }
      if (at.step >= stopAt && at.step < total) control.stopRequested = true;
      pollCommands(c);
      crashPoint("train-step");
      agreeWithOtherRanks(c);
      if (c.callbacks->onStepChecked(c)) break;  // the position moved: the loader starts again there
      if (epochDone) break;
    }
    // An epoch that trains nothing would repeat for ever (a rollback goes back).
    if (at.step == stepBefore && !control.stopRequested && !control.rolledBack)
      throw std::logic_error("no step was made in epoch " + std::to_string(at.epoch) + " (batch " +
                             std::to_string(at.batchInEpoch) + " of " + std::to_string(nb) + ")");
  }
  c.window->flush();
}

}  // namespace studio
