#include "train/trainer.h"

#include <cstdio>

#include "dist/process_group.h"
#include "run/crash_point.h"
#include "run/run_recorder.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/device_info.h"
#include "train/evaluation.h"
#include "train/final_test.h"
#include "train/probes/probe.h"
#include "train/rank_agreement.h"
#include "train/run_context.h"
#include "train/run_failure.h"
#include "train/run_setup.h"
#include "train/step/step_runner.h"
#include "train/train_loop.h"

namespace studio {
namespace {

// How a loop that returned ended; a stopped run keeps a checkpoint.
RunEnding howItEnded(RunContext& c, bool probe) {
  const LoopControl& control = c.control;
  const TrainingConfig& t = c.cfg.train;
  if (probe) return {control.stopRequested ? RunStatus::stopped : RunStatus::completed};
  if (control.divergedAt)
    return {RunStatus::failed,
            "the training loss or gradients became NaN or infinite at step " + std::to_string(*control.divergedAt) +
                (t.on_nonfinite == OnNonfinite::rollback
                     ? " and rolling back did not help (train.max_rollbacks " + std::to_string(t.max_rollbacks) + ")"
                     : " (train.on_nonfinite " + t.on_nonfinite + ")") +
                "; lower optimizer.lr or the schedule's peak, clip gradients (train.grad_clip_norm), or set "
                "train.on_nonfinite to rollback or skip. The last checkpoint is kept"};
  if (!control.earlyStopReason.empty()) return {RunStatus::early_stopped};
  // A stop that came after the last step (during its evaluation: a search's
  // pruner deciding on the last figure) ends a run that trained every step:
  // completed, with its test figures (issue 60, item 4).
  if (control.stopRequested && c.position.step < c.steps.totalSteps) {
    syncBatchNormStatistics(c);
    c.checkpoints->save(false);
    log::info("stopped at step " + std::to_string(c.position.step) +
              "; checkpoint saved, resume with: training-studio-cli resume " + c.runDir);
    return {RunStatus::stopped};
  }
  return {RunStatus::completed};
}

RunSummary summarise(const RunContext& c, const RunEnding& ending, const Probe* probe) {
  RunSummary s;
  s.runDir = c.runDir;
  s.status = ending.end;
  s.error = ending.error;
  s.device = describeDevice(c.where.device);
  if (!probes(c.start)) s.task = c.cfg.task.kind.value();
  s.steps = c.position.step;
  s.totalSteps = c.steps.totalSteps;
  s.epochs = c.position.epoch;
  s.finalTrainLoss = c.lastTrainLoss;
  s.finalEvalLoss = c.lastEvalLoss;
  s.samplesPerSecond =
      c.times.train > 0 ? static_cast<double>(c.times.trainSamples) / c.times.train : c.recordedSamplesPerSecond;
  s.wallSeconds = c.wallSeconds();
  s.stepper.cudaGraphs = c.stepper ? c.stepper->graphStatus() : std::string();
  s.seconds.setup = c.times.setup;
  s.seconds.train = c.times.train;
  s.seconds.eval = c.times.eval;
  s.seconds.write = c.times.write;
  s.rank = c.where.ranks ? c.where.ranks->rank() : 0;
  s.worldSize = static_cast<int>(c.world());
  if (c.position.microSplit > 1) s.stepper.microBatch = c.microBatch();
  if (c.callbacks) c.callbacks->onRunEnd(c, s);
  if (probe) probe->addTo(s);
  try {
    if (c.skipped.defined()) s.nonfinite.skippedSteps = static_cast<int64_t>(c.skipped.item<float>());
  } catch (const std::exception&) {
    // A broken device cannot report it; the error says why.
  }
  return s;
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::string runDir, RunStart start, StartOptions options, SessionChannel& channel)
    : m_ctx(std::make_unique<RunContext>(std::move(config), std::move(runDir), std::move(start), options, channel)) {}

Trainer::~Trainer() = default;

RunSummary Trainer::run() {
  RunContext& c = *m_ctx;
  c.times.started = Clock::now();
  RunEnding ending;
  RunSummary summary;
  std::unique_ptr<Probe> probe;
  try {
    {
      Timed timed{c.times.setup};
      ActivityScope busy(c, RunActivity::SettingUp);
      setupRun(c);
    }
    probe = makeProbe(c);
    if (probe)
      probe->run();
    else
      trainLoop(c);
    ending = howItEnded(c, probe != nullptr);
    summary = summarise(c, ending, probe.get());
    if (!probe && (ending.end == RunStatus::completed || ending.end == RunStatus::early_stopped)) finalTest(c, summary);
  } catch (...) {
    ending = describeFailure(c);
  }
  if (ending.end == RunStatus::failed) {
    log::error("run failed: " + ending.error);
    summary = summarise(c, ending, probe.get());
    summary.badInput = ending.badInput;
  }
  // A resume refused in its set-up (before it had a recorder) leaves the
  // folder as it was: its summary.json (a stopped run's figures) stays, and
  // the error is the caller's and log.txt's.
  const bool folderUntouched = resumes(c.start) && !c.recorder;
  // A new run whose model.weights was refused had not begun: its folder
  // goes, as a refused setting leaves none (issue 41, item 16).
  if (ending.end == RunStatus::failed && c.weightsRefused && !resumes(c.start) && !c.start.as<run_start::Continue>() &&
      c.where.writer) {
    c.recorder.reset();
    c.logSink.reset();
    if (removeTree(c.runDir)) {
      summary.error += " (nothing had begun: its run folder is removed)";
      return summary;
    }
  }
  try {
    if (c.recorder) c.recorder->finish(summary);
    crashPoint("run-before-summary");
    if (c.where.writer && !folderUntouched) writeSummaryFile(c.runDir, summary);
  } catch (const std::exception& e) {
    log::error(e.what());
    if (summary.error.empty()) {
      summary.status = RunStatus::failed;
      summary.error = e.what();
    }
  }
  return summary;
}

}  // namespace studio
