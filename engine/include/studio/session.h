#pragma once
// A training session: the engine thread, and the handle a front-end (the
// window, the CLI, a test) holds to control it and read its metrics.
//
// Threads: every public method is for the one front-end thread that owns the
// Session (the UI thread, the CLI's main thread). The engine thread never
// waits for it: metrics and commands cross through bounded lock-free
// single-producer/single-consumer queues; records that do not fit are counted
// in droppedRecords() (metrics.csv always has them all).

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "studio/lr_schedule.h"
#include "studio/metric_record.h"
#include "studio/presets.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"
#include "studio/train_config.h"

namespace studio {

enum class SessionState { Idle, Starting, Running, Paused, Finished, Stopped, Failed };
const char* stateName(SessionState s);

// A run's final figures (RunSummary) and summary.json: run_summary.h.

// Live position of the run, readable at any time without waiting.
struct Progress {
  SessionState state = SessionState::Idle;
  int64_t step = 0;
  int64_t totalSteps = 0;
  int64_t epoch = 0;
  double samplesPerSecond = 0;
  double wallSeconds = 0;
  double lastLoss = MetricRecord::kNone;
  std::string device;
  std::string runDir;
  // What the engine is doing besides training steps ("decoding images" before
  // the first step, "evaluating on the test set" with its batches) and how
  // far it is (phaseTotal 0: no count). Empty while it trains.
  std::string phase;
  int64_t phaseDone = 0, phaseTotal = 0;
  // Records the front-end's queue had no room for (metrics.csv has them all).
  int64_t droppedRecords = 0;
  // Stop was asked and the run has not ended yet (it finishes its step or
  // evaluation, then writes its checkpoint).
  bool stopping = false;
};

struct StartOptions {
  // Stop (as the Stop button does, with a checkpoint) once this many
  // optimizer steps are done; 0: run to the end. For tests and screenshots.
  int64_t stopAtStep = 0;
  // Capacity of the metric queue to the front-end.
  size_t metricQueueCapacity = 1 << 16;
};

// training-studio-cli continue: more epochs for a finished, early-stopped
// or stopped run, in its own folder, with its history kept.
struct ContinueOptions {
  int64_t epochs = 0;  // more epochs; at least 1
  // restart: the schedule again over them; constant: one learning rate.
  Choice<ContinueSchedule> schedule = ContinueSchedule::restart;
  double lr = 0;                               // 0: restart, optimizer.lr; constant, the run's last learning rate
  std::vector<std::string> scheduleOverrides;  // "schedule.key=value" for the restarted schedule
};

// training-studio-cli fork: a new run from another run's checkpoint with
// edited settings. The model and the data may not change.
struct ForkOptions {
  std::string from = "last";           // best | last | step-N
  std::vector<std::string> overrides;  // "key=value"
  std::string outputDir;               // "": beside the parent's folder
};

// training-studio-cli lr-find: a learning-rate range test (Smith 2017;
// fastai's lr_find): from fresh weights, `steps` optimizer steps at learning
// rates growing exponentially from lrMin to lrMax, the loss smoothed by an
// exponential moving average (beta, bias-corrected); it stops early when the
// smoothed loss exceeds divergeFactor times its lowest, or is not finite. Its
// own run folder records each step (metrics.csv) and the result
// (summary.json "lr_find"); the schedule of the settings is not used.
struct LrFindOptions {
  double lrMin = 1e-6;
  double lrMax = 1.0;
  int64_t steps = 100;
  double beta = 0.98;
  double divergeFactor = 4.0;
};

// training-studio-cli batch-find: the largest micro-batch whose training step
// (forward, backward and optimizer step, with the run's model, precision and
// optimizer) fits in the device's memory. Sizes double from 1 until one runs
// out of memory (c10::OutOfMemoryError, caught and freed), then a bisection
// narrows the step to within 1/16. On the CPU the memory is that of
// memory.cpu_limit_mib, or half of what is free when it is 0 (the kernel
// would kill the process, not report it). Its own run folder records the
// result (summary.json "batch_find").
struct BatchFindOptions {
  int64_t maxBatch = 65536;  // no larger size is tried
};

// Settings that do not validate; what() lists every error with its field.
struct InvalidSettings : InputError {
  // source: where the settings came from ("settings file runs/x/settings.json").
  explicit InvalidSettings(std::vector<ConfigError> e, const std::string& source = "");
  std::vector<ConfigError> errors;
};

struct RunStart;  // how the engine begins a run (engine internals)

class Session {
 public:
  Session();
  ~Session();  // stops a running session (writing its checkpoint) and joins
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Validates (throws InvalidSettings) and starts training in a new run
  // folder under config.output.dir.
  void start(const TrainConfig& config, const StartOptions& options = {});
  // Continues the run in runDir from its last checkpoint; throws
  // std::invalid_argument naming the folder or file if it cannot be resumed
  // (ConfigFileError if its settings.json is unreadable).
  void resume(const std::string& runDir, const StartOptions& options = {});
  // Trains runDir further (ContinueOptions); throws InputError naming what
  // is wrong (0 epochs, an unknown schedule), and as resume() does for the
  // folder, its settings and its checkpoint.
  void continueRun(const std::string& runDir, const ContinueOptions& more, const StartOptions& options = {});
  // Starts a new run folder from a checkpoint of parentDir; returns its
  // folder. Throws InputError, before any folder is made, for a missing or
  // mismatched checkpoint or a change to the model or the data.
  std::string fork(const std::string& parentDir, const ForkOptions& fork, const StartOptions& options = {});
  // A learning-rate range test on these settings in a new run folder
  // (named <name>-lr-find); throws InputError for bad options.
  void findLearningRate(const TrainConfig& config, const LrFindOptions& find);
  // batch-find on these settings in a new run folder (<name>-batch-find);
  // throws InputError for bad options. The run fails (bad input) when not
  // even a micro-batch of 2 fits.
  void findBatchSize(const TrainConfig& config, const BatchFindOptions& find);
  // A run in one process per entry of config.distributed.devices: starts
  // PyTorch's launcher (`torchrun`, the program given) with the CLI (`cli`)
  // on these settings, and shows rank 0's progress and records through this
  // session as an in-process run's (its --report lines). stop() stops all
  // processes with a checkpoint (SIGTERM to torchrun, which passes it on);
  // pause and the other commands apply to in-process runs only. Throws
  // InvalidSettings, or InputError when the programs cannot be started.
  void startProcesses(const TrainConfig& config, const std::string& torchrun, const std::string& cli);

  void pause();
  void resumeTraining();
  void stop();  // also of a run in several processes
  void saveCheckpointNow();
  // As saveCheckpointNow, then waits (up to timeout) until it is written,
  // also while paused; false when it was not (the run ended or failed).
  bool saveCheckpointAndWait(std::chrono::milliseconds timeout);
  // Scales the schedule so the current learning rate becomes `lr`.
  void setLearningRate(double lr);

  // Non-blocking; false when nothing new arrived.
  bool pollMetric(MetricRecord& out);
  Progress progress() const;
  // Waits up to `timeout` for the engine thread to end; true when it has.
  bool wait(std::chrono::milliseconds timeout);
  bool finished() const;
  // Valid once finished().
  RunSummary summary() const;
  int64_t droppedRecords() const;

 private:
  void launchProbe(const TrainConfig& config, const std::string& suffix, const RunStart& from);
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Writes the trained weights of a run for use outside the studio:
//   model.pt        a state dict Python's torch.load(path) reads (weights_only)
//   checkpoint.ckpt the full checkpoint (resumable)
//   settings.json   the exact settings
// `which` is "auto" (the weights of the run's test figures, summary.json's
// test_weights), "best", "last" or "ema" (the last checkpoint's moving
// average of the weights, train.ema); "best" falls back to "last" (saying so
// in note) when the run has no best checkpoint. Throws InputError or IoError
// naming the file.
struct ExportResult {
  std::string checkpoint;           // "best" or "last": the one written
  std::string note;                 // why it is not the one asked for, if not
  std::vector<std::string> files;   // written, in order
  std::vector<std::string> checks;  // what the check in Python said, line by line (export.json holds the figures)
};
// What else an export writes and proves (training-studio-cli export's
// options). format "onnx" adds model.onnx and runs the check in the studio's
// Python (resources/export/studio_export.py): model.onnx in ONNX Runtime,
// and model.safetensors with model.py, model.pt or model.ts in PyTorch, each
// on up to `parityExamples` of the run's test examples against the studio's
// own outputs; a difference over `tolerance` throws ExportCheckFailed, the
// files kept. `check` runs the same check on the PyTorch files alone.
// quantize "int8" adds model.int8.onnx (ONNX Runtime's static QDQ
// quantization calibrated on `calibrationExamples` training examples by
// `calibration`), with both models' test figure and CPU speed.
STUDIO_CHOICE(ExportFormat, torch, onnx)
STUDIO_CHOICE(ExportQuantize, none, int8)
STUDIO_CHOICE(QuantCalibration, minmax, entropy, percentile)
struct ExportOptions {
  Choice<WeightsChoice> which = WeightsChoice::auto_;
  Choice<ExportFormat> format = ExportFormat::torch;  // torch (the PyTorch files) or onnx (model.onnx too)
  bool check = false;
  int opset = 18;
  Choice<ExportQuantize> quantize = ExportQuantize::none;
  Choice<QuantCalibration> calibration = QuantCalibration::minmax;
  int64_t calibrationExamples = 300;
  int64_t parityExamples = 256;
  double tolerance = 1e-4;
  double maxDrop = 1.0;  // points of the test figure INT8 may lose before the export says so
};
// The exported files do not answer as the studio does (exit 1 in the CLI).
struct ExportCheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
ExportResult exportRun(const std::string& runDir, const std::string& outDir, const ExportOptions& options);
inline ExportResult exportRun(const std::string& runDir, const std::string& outDir, const std::string& which = "auto") {
  ExportOptions o;
  o.which.setName(which);
  return exportRun(runDir, outDir, o);
}

}  // namespace studio
