#pragma once
// One run's state, grouped by concern, and the few services its parts share
// (the metric window, evaluation, checkpoints, the callbacks). The trainer
// makes it, run_setup fills it, the loops and callbacks work on it.
// Thread: engine thread only (the front-end is reached through `ch`).

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "run/checkpoint_state.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/lr_schedule.h"
#include "studio/metric_record.h"
#include "studio/session.h"
#include "studio/train_config.h"
#include "train/run_start.h"
#include "train/session_channel.h"

namespace studio {

class BatchLoader;
class CallbackList;
class Checkpoints;
class CpuMemoryMeter;
class Evaluation;
class GradReducer;
class LossScaler;
class MetricWindow;
class Model;
class Optimizer;
class ProcessGroup;
class RunRecorder;
class StepRunner;
class Task;
struct CheckpointParts;

using Clock = std::chrono::steady_clock;

// "%.4g": the figures in log lines and messages.
std::string fmt(double v, int digits = 4);

// What the run is busy with, for an out-of-memory message.
enum class RunActivity { Training, SettingUp, Evaluating };

// A split's figures are keyed by metric id (Figures, studio/run_summary.h):
// what each task gives is its Task::figures.

// What stops the loop, and why; set by commands, callbacks and other ranks.
struct LoopControl {
  bool stopRequested = false;
  bool paused = false;
  bool rollbackDue = false;           // train.on_nonfinite rollback, at the step's end
  bool rolledBack = false;            // a rollback happened in this run (its position went back)
  std::optional<int64_t> divergedAt;  // the loss went non-finite here: the run fails
  std::string earlyStopReason;        // train.early_stopping ended the run
  // No evaluation or checkpoint of weights about to be dropped or known bad.
  bool weightsSuspect() const { return rollbackDue || divergedAt.has_value(); }
};

// Where the time went (summary.json "seconds"), and the run's wall clock.
struct RunTimes {
  Clock::time_point started;
  double wallAtStart = 0;  // a resumed run's earlier time
  double setup = 0, eval = 0, write = 0, train = 0;
  int64_t trainSamples = 0;  // for samples/s
};

// Adds the time its scope took to one of RunTimes's figures.
struct Timed {
  double& into;
  Clock::time_point t0 = Clock::now();
  ~Timed() { into += std::chrono::duration<double>(Clock::now() - t0).count(); }
};

struct RunContext {
  RunContext(TrainConfig config, std::string dir, RunStart how, StartOptions opts, SessionChannel& channel);
  ~RunContext();

  // What was asked.
  TrainConfig cfg;
  std::string runDir;
  RunStart start;
  StartOptions options;
  SessionChannel& ch;

  // Where it runs. Under torchrun: the process group (nullptr alone), the
  // gradient reducer, and whether this process writes the run folder (rank 0).
  struct Placement {
    torch::Device device{torch::kCPU};
    ProcessGroup* ranks = nullptr;
    std::unique_ptr<GradReducer> reducer;
    bool writer = true;
    bool syncedBatchNorm = false;  // distributed.batchnorm sync, with BatchNorm layers to sync
    bool autocast = false;
    at::ScalarType autocastDtype = at::kFloat;
    std::unique_ptr<CpuMemoryMeter> cpuMemory;  // memory.cpu_limit_mib on the CPU
  } where;

  struct Data {
    DataPlan plan;
    DataSplits splits;
    std::shared_ptr<Dataset> val, test;  // on the device when it holds the data
    LoaderOptions loaderOptions;
    std::unique_ptr<BatchLoader> loader;
  } data;

  // What is trained and how.
  struct Parts {
    std::unique_ptr<Task> task;
    std::unique_ptr<Model> model;
    std::string modelSha256;  // a TorchScript model's file
    // model.weights as loaded (run_info.json "pretrained"); null when none.
    nlohmann::json pretrained;
    // train.finetune's layer groups (run_info.json "finetune"); null when off.
    nlohmann::json finetune;
    std::unique_ptr<Optimizer> optimizer;
    std::unique_ptr<LossScaler> scaler;
    std::unique_ptr<RunSchedule> schedule;
  } parts;

  // A fork's run_info.parent, and the continuations (run_info.continued).
  struct Lineage {
    // run_info.run_id, made when the run began and kept in its checkpoints:
    // a checkpoint of another run is refused by resume ("" in runs from
    // before it existed: not checked).
    std::string runId;
    nlohmann::json parent;
    std::vector<ScheduleExtension> extensions;
    int64_t stepShift = 0;  // a fork with another batch size: its plan is moved by this many steps
  } lineage;

  StepPlan steps;
  RunPosition position;  // in every checkpoint
  LrAdjustments lr;      // in every checkpoint
  // Steps skipped on inf/NaN and non-finite steps: float32 scalars on the
  // device, counted inside the step.
  torch::Tensor skipped, nonfinite;
  LoopControl control;
  RunTimes times;
  RunActivity activity = RunActivity::Training;

  // The last figures, for the summary. The last evaluation of the test set
  // (when there is no validation set) is reused as the final test figures
  // when it ran at the last step.
  double lastTrainLoss = MetricRecord::kNone;
  // A resumed run's throughput as its rows recorded it: its summary's figure
  // when it trains no further step (killed after its last checkpoint).
  double recordedSamplesPerSecond = MetricRecord::kNone;
  double lastEvalLoss = MetricRecord::kNone;
  // task.tune_thresholds: each label's threshold, from the last validation
  // evaluation (empty: task.threshold for every label).
  std::vector<double> thresholds;
  std::optional<std::pair<int64_t, Figures>> lastTestEval;

  // model.weights was refused while setting up: a new run's folder is then
  // removed (nothing had begun), as a refused setting leaves none.
  bool weightsRefused = false;

  std::unique_ptr<RunRecorder> recorder;  // rank 0's
  std::shared_ptr<void> logSink;

  // The services, made by run_setup.
  std::unique_ptr<StepRunner> stepper;  // eager or graphed, inside the out-of-memory back-off
  std::unique_ptr<MetricWindow> window;
  std::unique_ptr<Evaluation> evaluation;
  std::unique_ptr<Checkpoints> checkpoints;
  std::unique_ptr<CallbackList> callbacks;

  double wallSeconds() const;
  // The learning rate that acts at this step: the schedule's, scaled by the
  // person's changes and the rollbacks (lr.multiplier).
  double lrAt(int64_t step) const;
  // A record of this kind at the current step, epoch and time.
  MetricRecord record(RecordKind kind) const;
  // Into metrics.csv (rank 0) and to the front-end.
  void post(const MetricRecord& r);
  void setPhase(const std::string& phase, int64_t done = 0, int64_t total = 0);
  // memory.oom_backoff: the examples per forward pass (the loader's batch in
  // position.microSplit parts).
  int64_t microBatch() const;
  // The settings as one process would train them: the global batch of all
  // ranks (the plan of steps and epochs is that of the global batches).
  TrainConfig globalBatchConfig() const;
  int64_t world() const;
  // The position the front-end shows.
  void showPosition();
  // The model, optimizer, scaler and device counters, with `state` for the
  // figures (the callbacks add theirs).
  CheckpointParts checkpointParts(CheckpointState& state);
};

// Sets the run's activity for its scope; an error leaving the scope leaves
// it set, for the message.
class ActivityScope {
 public:
  ActivityScope(RunContext& ctx, RunActivity what);
  ~ActivityScope();
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  RunActivity& m_slot;
  RunActivity m_before;
  int m_exceptions;
};

}  // namespace studio
