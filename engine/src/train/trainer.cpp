#include "train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/version.h>

#include <chrono>
#include <exception>
#include <optional>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "dist/grad_reducer.h"
#include "dist/process_group.h"
#include "models/model.h"
#include "models/torchscript_model.h"
#include "optim/ema_weights.h"
#include "optim/grad_clip.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/checkpoint.h"
#include "run/crash_point.h"
#include "run/run_recorder.h"
#include "studio/eval_report.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "studio/run_layout.h"
#include "train/autocast_scope.h"
#include "train/cpu_memory.h"
#include "train/device_info.h"
#include "train/evaluator.h"
#include "train/step_graph.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_upsample_bilinear2d_aa.h>
#include <filesystem>

#if defined(STUDIO_TCMALLOC)
#include <gperftools/malloc_extension_c.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

namespace studio {
using Clock = std::chrono::steady_clock;

namespace {

std::string fmt(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

struct EvalResult {
  double loss = MetricRecord::kNone, accuracy = MetricRecord::kNone;
};

nlohmann::json inputJson(const InputShape& s) {
  return {{"channels", s.channels}, {"height", s.height}, {"width", s.width}, {"features", s.features}};
}

// Up to n images side by side, each scaled to fit 64 pixels, as one picture.
Image thumbnailStrip(const torch::Tensor& u8, int64_t& cellH, int64_t& cellW) {
  const int64_t n = u8.size(0), c = u8.size(1), h = u8.size(2), w = u8.size(3);
  const double scale = std::min(1.0, 64.0 / static_cast<double>(std::max(h, w)));
  cellH = std::max<int64_t>(1, std::llround(static_cast<double>(h) * scale));
  cellW = std::max<int64_t>(1, std::llround(static_cast<double>(w) * scale));
  torch::Tensor x = u8.to(torch::kFloat32);
  if (cellH != h || cellW != w) x = at::_upsample_bilinear2d_aa(x, {cellH, cellW}, false, std::nullopt, std::nullopt);
  // [n, C, h, w] -> [h, n * w, C]
  torch::Tensor strip = x.round().clamp(0, 255).to(torch::kUInt8).permute({2, 0, 3, 1}).reshape({cellH, n * cellW, c});
  strip = strip.contiguous();
  Image img;
  img.height = cellH;
  img.width = n * cellW;
  img.channels = c;
  img.pixels.assign(strip.data_ptr<uint8_t>(), strip.data_ptr<uint8_t>() + strip.numel());
  return img;
}

// Per-step figures that stay on the device until the next flush.
struct PendingStep {
  int64_t step, epoch;
  double lr;
  int64_t samples;
  int64_t microBatch;
};

}  // namespace

struct Trainer::State {
  TrainConfig cfg;
  std::string runDir;
  RunStart start;
  bool resume;
  StartOptions options;
  SessionChannel& ch;

  torch::Device device{torch::kCPU};
  // Data parallelism under torchrun: the process group (nullptr alone), the
  // gradient reducer, and whether this process writes the run folder (rank 0).
  ProcessGroup* ranks = nullptr;
  std::unique_ptr<GradReducer> reducer;
  bool writer = true;
  bool syncedBatchNorm = false;  // distributed.batchnorm sync, with BatchNorm layers to sync
  DataPlan plan;
  DataSplits data;
  std::shared_ptr<Dataset> valSet, testSet;  // on the device when it holds the data
  LoaderOptions loaderOptions;
  std::unique_ptr<BatchLoader> loader;
  std::unique_ptr<CpuMemoryMeter> cpuMemory;  // memory.cpu_limit_mib on the CPU
  std::unique_ptr<Model> model;
  std::string modelSha256;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LossScaler> scaler;
  std::unique_ptr<EmaWeights> ema;  // train.ema
  std::unique_ptr<RunSchedule> schedule;
  // A fork's run_info.parent, and the continuations (run_info.continued).
  nlohmann::json parentInfo;
  std::vector<ScheduleExtension> extensions;
  int64_t stepShift = 0;  // a fork with another batch size: its plan is moved by this many steps
  std::unique_ptr<RunRecorder> recorder;
  std::shared_ptr<void> logSink;
  StepPlan steps;
  bool autocast = false;
  at::ScalarType autocastDtype = at::kFloat;

  // Position and running figures (all in the checkpoint).
  CheckpointCounters counters;
  torch::Tensor skipped;  // float32 scalar on the device: steps skipped on inf/NaN
  // Non-finite steps (train.on_nonfinite): a device count, a scratch flag for
  // the gradient check without loss scaling, and what the host has seen.
  torch::Tensor nonfinite, gradsBad, unitScale;
  int64_t nonfiniteSeen = 0;
  int64_t lastNonfiniteStep = 0;
  bool rollbackDue = false;
  std::optional<int64_t> divergedAt;  // the run stops: the loss went non-finite here
  std::string earlyStopReason;        // train.early_stopping ended the run

  // Between flushes.
  std::vector<torch::Tensor> pendingStats;  // [loss, grad_norm, scale, skipped]
  std::vector<PendingStep> pending;
  Clock::time_point windowStart;
  double wallAtStart = 0;
  Clock::time_point started;
  double trainSeconds = 0;      // time in training steps, for samples/s
  int64_t trainSamples = 0;
  double lastTrainLoss = MetricRecord::kNone;
  double lastEvalLoss = MetricRecord::kNone;
  // The last evaluation of the test set (when there is no validation set),
  // reused as the final test figures when it ran at the last step.
  std::optional<std::pair<int64_t, EvalResult>> lastTestEval;
  bool stopRequested = false;
  bool paused = false;
  // What the run was doing, for an out-of-memory message: "" (a training
  // step), "setup" or "evaluation".
  std::string busyWith;
  // Sets busyWith for its scope; an error leaving the scope leaves it set,
  // for the message.
  struct Busy {
    std::string& slot;
    std::string before;
    int exceptions = std::uncaught_exceptions();
    Busy(std::string& s, const char* what) : slot(s), before(s) { slot = what; }
    ~Busy() {
      if (std::uncaught_exceptions() == exceptions) slot = before;
    }
  };

  // memory.oom_backoff: the examples per forward pass (the loader's batch in
  // counters.microSplit parts).
  int64_t microBatch() const {
    const int64_t b = cfg.train.batch_size, k = counters.microSplit;
    return (b + k - 1) / k;
  }

  // performance.cuda_graphs: after kGraphWarmup eager steps, each full step
  // (k full micro-batches) replays one recorded graph of the whole step; a
  // short last group of an epoch runs eagerly on the same gradient buffers.
  static constexpr int64_t kGraphWarmup = 3;
  StepGraph graph;
  bool graphWanted = false;
  std::string graphStatus;
  int64_t graphWarmupDone = 0;
  std::vector<torch::Tensor> staticX, staticY;  // the recorded inputs
  torch::Tensor lrDevice, momentumDevice, staticRow;

  // Where the time went (summary.json "seconds").
  double setupSeconds = 0, evalSeconds = 0, writeSeconds = 0;
  struct Timed {
    double& into;
    Clock::time_point t0 = Clock::now();
    ~Timed() { into += std::chrono::duration<double>(Clock::now() - t0).count(); }
  };

  State(TrainConfig c, std::string dir, RunStart s, StartOptions o, SessionChannel& channel)
      : cfg(std::move(c)), runDir(std::move(dir)), start(std::move(s)), resume(start.resume), options(o), ch(channel) {
    parentInfo = start.parent;
  }

  double wallSeconds() const {
    return wallAtStart + std::chrono::duration<double>(Clock::now() - started).count();
  }

  void setPhase(const std::string& phase, int64_t done = 0, int64_t total = 0) {
    {
      std::lock_guard<std::mutex> lock(ch.textMutex);
      ch.phase = phase;
    }
    ch.phaseDone = done;
    ch.phaseTotal = total;
  }

  void setup() {
    ranks = currentProcessGroup();
    writer = !ranks || ranks->leader();
    device = resolveDevice(cfg.performance.device);
    PerformanceConfig performance = cfg.performance;
    if (ranks) {
      // One GPU per process: LOCAL_RANK's, unless the settings name one.
      if (device.is_cuda() && cfg.performance.device.find(':') == std::string::npos) {
        if (ranks->localRank() >= static_cast<int>(torch::cuda::device_count()))
          throw InputError(ranks->describe() + " has LOCAL_RANK " + std::to_string(ranks->localRank()) + " but only " +
                           std::to_string(torch::cuda::device_count()) +
                           " CUDA device(s) exist here: start at most that many processes per machine "
                           "(torchrun --nproc-per-node)");
        device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(ranks->localRank()));
      }
      // The machine's cores shared between its processes.
      if (performance.threads == 0)
        performance.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() /
                                                                static_cast<unsigned>(ranks->localWorld())));
      ranks->useDevice(device);
    }
    applyPerformanceSwitches(performance, device);
    DeviceWarmup warmup(device);  // the GPU starts up while the data loads
    {
      std::lock_guard<std::mutex> lock(ch.textMutex);
      ch.device = describeDevice(device);
      ch.runDir = runDir;
    }
    if (writer) logSink = log::addFileSink(runDir + "/" + run_files::kLog);
    log::info((start.extend ? "continuing run " : resume ? "resuming run " : "starting run ") + runDir + " on " +
              describeDevice(device) + " with LibTorch " + TORCH_VERSION);
    const nlohmann::json stored = resume ? storedRunInfo() : nlohmann::json::object();

    if (!resume && writer) {
      // Settings first: a run that fails on its data still records what it was.
      recorder = std::make_unique<RunRecorder>(runDir, false, 0);
      recorder->writeSettings(cfg, {{run_files::run_info::kLibtorch, TORCH_VERSION},
                                    {run_files::run_info::kDevice, describeDevice(device)}});
    }
    torch::manual_seed(cfg.train.seed);
    setPhase("reading the data");
    plan = planData(cfg);
    LoadProgress progress;
    progress.report = [this](const std::string& phase, int64_t done, int64_t total) { setPhase(phase, done, total); };
    progress.cancelled = [this] { return ch.stopAsked.load(); };
    data = loadData(cfg, plan, progress);
    logData();

    const std::string& mode = cfg.precision.mode;
    autocast = mode != "fp32";
    autocastDtype = mode == "bf16" ? at::kBFloat16 : at::kHalf;
    if (mode == "fp16" && !device.is_cuda())
      log::warn("precision.mode fp16 on the CPU is slow and meant for testing; bf16 is the CPU's fast type");

    warmup.wait();
    setPhase("building the model");
    int64_t cpuLimitMiB = cfg.memory.cpu_limit_mib;
    if (start.batchFind && cpuLimitMiB == 0 && !device.is_cuda()) {
      // Past the machine's memory the kernel kills the process; a limit
      // turns that into an error the search can catch.
      cpuLimitMiB = std::max<int64_t>(1, (freeMemoryBytes(device) / 2) >> 20);
      log::info("batch-find on the CPU: measured against half of the free memory, " + std::to_string(cpuLimitMiB) +
                " MiB (set memory.cpu_limit_mib to choose)");
    }
    if (cpuLimitMiB > 0) {
      if (device.is_cuda()) {
        log::warn("memory.cpu_limit_mib applies on the CPU; this run is on " + describeDevice(device) +
                  " and uses the GPU's memory as it is");
      } else {
        try {
          cpuMemory = std::make_unique<CpuMemoryMeter>(cpuLimitMiB << 20);
        } catch (const std::logic_error&) {
          throw InputError("memory.cpu_limit_mib: another run in this process already has a CPU memory limit; "
                           "start this one when it has ended, or set the limit to 0");
        }
        log::info("CPU tensor memory limited to " + std::to_string(cpuLimitMiB) +
                  " MiB (memory.cpu_limit_mib), counted from after the data was loaded");
      }
    }
    model = makeModel(cfg.model, data.input, data.numClasses());
    if (auto* ts = dynamic_cast<TorchScriptModel*>(model.get())) {
      modelSha256 = ts->sha256();
      if (resume) checkSameModelFile(stored);
    }
    model->to(device);
    {
      CudnnHeuristicsOnly heuristics;  // a probe's shape, never trained on
      checkModelOutput(*model, cfg.model, data.input, data.numClasses(), device);
    }
    if (cfg.performance.channels_last) model->toChannelsLast();
    if (cfg.memory.activation_checkpointing != "off") {
      const int64_t every = cfg.memory.activation_checkpointing == "every" ? cfg.memory.checkpoint_blocks : 0;
      log::info("activation checkpointing (" + cfg.memory.activation_checkpointing +
                "): " + model->checkpointActivations(every));
    }
    model->setTraining(true);
    if (ranks) {
      // The same initial weights on every rank: rank 0's.
      torch::NoGradGuard noGrad;
      std::vector<torch::Tensor> state = model->parameters();
      for (const auto& b : model->buffers()) state.push_back(b);
      ranks->broadcast(state, "the initial weights' broadcast");
    }
    optimizer = std::make_unique<Optimizer>(model->parameters(), cfg.optimizer);
    scaler = std::make_unique<LossScaler>(cfg.precision.loss_scale, device, mode == "fp16");
    if (cfg.train.ema.decay > 0) ema = std::make_unique<EmaWeights>(cfg.train.ema.decay);
    skipped = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
    nonfinite = torch::zeros_like(skipped);
    gradsBad = torch::zeros_like(skipped);
    unitScale = torch::ones_like(skipped);

    steps = planSteps(globalBatchConfig(), data.train->size());

    const bool image = data.kind == DataKind::Image;
    loaderOptions.batchSize = cfg.train.batch_size;
    loaderOptions.augmentFlip = image && cfg.data.augment_flip;
    loaderOptions.augmentCrop = image ? cfg.data.augment_crop : 0;
    loaderOptions.norm = Normalization::make(image, data.mean, data.std, device);
    loaderOptions.seed = cfg.train.seed;
    loaderOptions.deviceResident = residentOnDevice();
    loaderOptions.workers = cfg.loader.workers;
    loaderOptions.prefetch = cfg.loader.prefetch;
    loaderOptions.pinMemory = cfg.loader.pin_memory;
    loaderOptions.channelsLast = cfg.performance.channels_last;
    if (ranks) {
      loaderOptions.shardRank = ranks->rank();
      loaderOptions.shardCount = ranks->world();
    }
    setPhase(loaderOptions.deviceResident ? "moving the data to " + describeDevice(device) : "starting the loader");
    loader = std::make_unique<BatchLoader>(data.train, loaderOptions, device);
    valSet = loaderOptions.deviceResident ? onDevice(data.val, device) : data.val;
    testSet = loaderOptions.deviceResident ? onDevice(data.test, device) : data.test;
    if (writer) writeClasses();

    if (resume) {
      CheckpointParts parts{*model, *optimizer, *scaler, skipped, counters, ema.get()};
      loadCheckpoint(runDir + "/" + run_files::kLastCheckpoint, parts, device);
      const int64_t world = ranks ? ranks->world() : 1;
      if (counters.worldSize != world)
        throw CheckpointError("checkpoint " + runDir + "/" + run_files::kLastCheckpoint + " was made by " +
                              std::to_string(counters.worldSize) + " process(es) and this run has " +
                              std::to_string(world) + ": its position in the epoch holds for " +
                              std::to_string(counters.worldSize) + " only; resume with " +
                              (counters.worldSize > 1 ? "torchrun --nproc-per-node " + std::to_string(counters.worldSize)
                                                      : std::string("one process (without torchrun)")) +
                              "; another number of processes needs a new run");
      requirePositionFits(runDir + "/" + run_files::kLastCheckpoint, "now has",
                          ": the run's data or batch size changed since; start a new run");
      nonfiniteSeen = counters.nonfiniteSteps;
      nonfinite.fill_(static_cast<double>(nonfiniteSeen));
      log::info("resumed at step " + std::to_string(counters.step) + " (epoch " + std::to_string(counters.epoch) +
                ", batch " + std::to_string(counters.batchInEpoch) + ")");
      readLineage(stored);
    } else if (!start.forkCheckpoint.empty()) {
      startFork();
    }
    planSchedule();
    if (start.extend) extend(*start.extend);
    ch.totalSteps = steps.totalSteps;
    wallAtStart = counters.wallSeconds;
    counters.worldSize = ranks ? ranks->world() : 1;
    if (resume && writer) recorder = std::make_unique<RunRecorder>(runDir, true, counters.step);
    if (!resume || start.extend) writeSettings();
    ch.step = counters.step;
    ch.epoch = counters.epoch;
    setupGraphs();
    if (ranks && cfg.distributed.batchnorm == "sync") {
      const int layers = model->synchroniseBatchNorm(ranks);
      if (layers < 0) throw InputError("distributed.batchnorm sync works on the built-in models only; set it to local");
      syncedBatchNorm = layers > 0;
      log::info("distributed.batchnorm sync: " + std::to_string(layers) +
                " BatchNorm layer(s) normalise with the whole global batch's statistics");
    }
    if (ranks) {
      reducer = std::make_unique<GradReducer>(model->parameters(), *ranks,
                                              static_cast<int64_t>(cfg.distributed.bucket_mib) << 20);
      log::info(ranks->describe() + ": batch " + std::to_string(cfg.train.batch_size) + " per process, " +
                std::to_string(cfg.train.batch_size * ranks->world()) + " in all; gradients summed in " +
                std::to_string(reducer->buckets()) + " bucket(s) of up to " +
                std::to_string(cfg.distributed.bucket_mib) + " MiB (" + ranks->backendName() + ")");
    }
    setPhase("");
    log::info("plan: " + std::to_string(steps.totalSteps) + " optimizer steps, " +
              std::to_string(steps.stepsPerEpoch) + " per epoch, batch " + std::to_string(cfg.train.batch_size) +
              " x " + std::to_string(cfg.train.accumulation_steps) + " accumulated, " + mode + ", model " +
              model->description() + " (" + std::to_string(model->parameterCount()) + " parameters)" +
              (loaderOptions.deviceResident ? ", data resident on the device"
                                            : ", " + std::to_string(cfg.loader.workers) + " loader workers"));
  }

  // The settings as one process would train them: the global batch of all
  // ranks (the plan of steps and epochs is that of the global batches).
  TrainConfig globalBatchConfig() const {
    TrainConfig c = cfg;
    if (ranks) c.train.batch_size *= ranks->world();
    return c;
  }

  // The loaded checkpoint's position must lie inside an epoch of this
  // loader ("that <epochHas> N batches<advice>" says why it does not).
  void requirePositionFits(const std::string& path, const std::string& epochHas, const std::string& advice) const {
    if (counters.batchInEpoch < loader->batchesPerEpoch()) return;
    throw CheckpointError("checkpoint " + path + " stopped at batch " + std::to_string(counters.batchInEpoch) +
                          " of an epoch that " + epochHas + " " + std::to_string(loader->batchesPerEpoch()) +
                          " batches" + advice);
  }

  // A resumed run's settings.json run_info, read once for its model file
  // and its lineage (an empty object when there is none).
  nlohmann::json storedRunInfo() const {
    const auto doc = nlohmann::json::parse(readFileBytes(runDir + "/" + run_files::kSettings, "settings file"),
                                           nullptr, false);
    const char* key = run_files::run_info::kKey;
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_object()) return nlohmann::json::object();
    return doc[key];
  }

  // A resumed run's lineage: the fork's step shift and the continuations.
  void readLineage(const nlohmann::json& info) {
    namespace k = run_files::run_info;
    const std::string path = runDir + "/" + run_files::kSettings;
    try {
      if (info.contains(k::kParent)) {
        parentInfo = info[k::kParent];
        stepShift = parentInfo.value("step_shift", int64_t{0});
      }
      if (info.contains(k::kContinued))
        for (const auto& e : info[k::kContinued]) extensions.push_back(extensionFromJson(e));
    } catch (const nlohmann::json::exception& e) {
      throw ConfigFileError("settings file " + path + ": run_info." + k::kParent + " or run_info." + k::kContinued +
                            " is unreadable (" + e.what() + ")");
    }
  }

  nlohmann::json extensionJson(const ScheduleExtension& e) const {
    nlohmann::json j = {{"from_step", e.from}, {"to_step", e.to}, {"schedule", e.how}, {"lr", e.lr}};
    if (e.how == "restart") {
      TrainConfig c;
      c.schedule = e.schedule;
      j["settings"] = toJson(c)["schedule"];
    }
    return j;
  }

  ScheduleExtension extensionFromJson(const nlohmann::json& j) const {
    ScheduleExtension e;
    e.from = j.at("from_step").get<int64_t>();
    e.to = j.at("to_step").get<int64_t>();
    e.how = j.at("schedule").get<std::string>();
    e.lr = j.at("lr").get<double>();
    if (e.how != "restart" && e.how != "constant") throw std::invalid_argument("schedule " + e.how);
    if (e.how == "restart") {
      nlohmann::json root = toJson(cfg);
      root["schedule"] = j.at("settings");
      std::vector<ConfigError> errors;
      e.schedule = configFromJson(root, errors).schedule;
      if (!errors.empty()) throw std::invalid_argument(errors.front().text());
    }
    if (e.from < 0 || e.to <= e.from || !(e.lr > 0)) throw std::invalid_argument("a continuation's steps or lr");
    return e;
  }

  // The schedule and the number of steps: the settings' plan (moved by a
  // fork's step shift), then the continuations.
  void planSchedule() {
    if (cfg.train.max_steps == 0) steps.totalSteps += stepShift;
    const int64_t planned = steps.totalSteps;
    if (!extensions.empty()) steps.totalSteps = std::max(planned, extensions.back().to);
    // A learning-rate range test sets its own rates, batch-find makes one
    // step per size: the schedule is not used.
    if (const std::string why = schedulePlanError(cfg.schedule, planned);
        !why.empty() && counters.step < planned && !start.lrFind && !start.batchFind)
      throw InputError(why);
    for (const auto& e : extensions)
      if (const std::string why = schedulePlanError(e.schedule, e.to - e.from, "the continuation's schedule");
          e.how == "restart" && !why.empty())
        throw InputError(why);
    const double defaultMomentum = cfg.optimizer.kind == "sgd" ? cfg.optimizer.momentum : cfg.optimizer.beta1;
    schedule = std::make_unique<RunSchedule>(cfg.schedule, cfg.optimizer.lr, planned, extensions, defaultMomentum);
  }

  // training-studio-cli continue: `epochs` more epochs after the plan's end
  // (or after the checkpoint, for an early-stopped run).
  void extend(const RunStart::Extend& x) {
    ScheduleExtension e;
    e.how = x.how;
    e.from = x.fromHere ? counters.step : std::max(counters.step, steps.totalSteps);
    e.to = e.from + x.epochs * steps.stepsPerEpoch;
    e.schedule = x.schedule;
    const double lastLr =
        counters.step > 0 ? schedule->lr(counters.step - 1) * counters.lrMultiplier : cfg.optimizer.lr;
    e.lr = x.lr > 0 ? x.lr : x.how == "constant" ? lastLr : cfg.optimizer.lr;
    if (counters.lrMultiplier != 1.0)
      log::info("the learning-rate changes made during the run (x" + fmt(counters.lrMultiplier) +
                ") end here; the continuation has its own learning rate");
    counters.lrMultiplier = 1.0;
    counters.earlyBadEvals = 0;  // early stopping counts afresh
    extensions.push_back(e);
    planSchedule();
    log::info("continuing from step " + std::to_string(counters.step) + " for " + std::to_string(x.epochs) +
              " more epoch(s): steps " + std::to_string(e.from + 1) + "-" + std::to_string(e.to) + ", " +
              (e.how == "constant" ? "a constant learning rate of " + fmt(e.lr)
                                   : "the " + e.schedule.kind + " schedule started again at learning rate " + fmt(e.lr)));
  }

  // A fork: the parent's weights, position and random state; its optimizer
  // state when the optimizer is the same kind; everything else afresh.
  void startFork() {
    const std::string& path = start.forkCheckpoint;
    const CheckpointFile file(path);  // read once for every part taken
    const bool sameOptimizer = parentInfo.value("optimizer", std::string()) == cfg.optimizer.kind;
    CheckpointParts from = parts();
    from.ema = nullptr;  // the fork's own average starts afresh
    loadCheckpoint(file, from, device, /*withOptimizer=*/false);
    if (sameOptimizer) {
      try {
        loadOptimizerState(file, *optimizer);
      } catch (const CheckpointError& e) {
        optimizer = std::make_unique<Optimizer>(model->parameters(), cfg.optimizer);
        log::info(std::string("the optimizer starts afresh: ") + e.what());
      }
    }
    if (cfg.precision.mode == "fp16" && parentInfo.value("precision", std::string()) == "fp16")
      loadScalerState(file, *scaler);
    const CheckpointCounters at = counters;
    const int64_t world = ranks ? ranks->world() : 1;
    if (at.worldSize != world && at.batchInEpoch > 0)
      throw CheckpointError("checkpoint " + path + " was made by " + std::to_string(at.worldSize) +
                            " process(es) in the middle of an epoch, and this fork has " + std::to_string(world) +
                            ": its position holds for " + std::to_string(at.worldSize) +
                            " only; fork from a checkpoint at an epoch's end, or with as many processes");
    counters = CheckpointCounters{};
    counters.step = at.step;
    counters.epoch = at.epoch;
    counters.batchInEpoch = at.batchInEpoch;
    requirePositionFits(path, "has", " with this fork's batch size; fork from a checkpoint at an epoch's end");
    const int64_t k = cfg.train.accumulation_steps;
    stepShift = counters.step - counters.epoch * steps.stepsPerEpoch - (counters.batchInEpoch + k - 1) / k;
    parentInfo["step_shift"] = stepShift;
    log::info("forked from " + parentInfo.value("run", std::string()) + " (" +
              parentInfo.value("checkpoint", std::string()) + " checkpoint, step " + std::to_string(counters.step) +
              ", epoch " + std::to_string(counters.epoch) + ")" +
              (sameOptimizer ? "" : "; the " + cfg.optimizer.kind + " optimizer starts afresh"));
  }

  void setupGraphs() {
    const std::string& want = cfg.performance.cuda_graphs;
    if (want == "off") {
      graphStatus = "off (performance.cuda_graphs off)";
      return;
    }
    std::string why;
    if (!device.is_cuda()) why = "the run is on the CPU";
    else if (!StepGraph::available()) why = "this LibTorch was built without CUDA";
    else if (cfg.memory.activation_checkpointing != "off") why = "activation checkpointing recomputes in the backward pass";
    else if (counters.microSplit > 1) why = "the micro-batch was split after running out of memory";
    else if (ranks) why = "the run has several processes (gradients are exchanged between them)";
    else why = optimizer->notCapturable(schedule->cyclesMomentum());
    if (!why.empty()) {
      if (want == "on")
        throw std::invalid_argument("performance.cuda_graphs is on, but " + why + "; set it to auto or off");
      graphStatus = "off: " + why;
      if (device.is_cuda()) log::info("CUDA graphs off: " + why);
      return;
    }
    graphWanted = true;
    graphStatus = "off: the run ended before the step was recorded";
    StepGraph::useSideStream(device);
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
    lrDevice = torch::zeros({}, f32);
    if (schedule->cyclesMomentum()) momentumDevice = torch::zeros({}, f32);
  }

  // loader.mode auto: the data stays on the device when the training split
  // takes at most half of what is free there (on the CPU: of the memory).
  bool residentOnDevice() const {
    if (cfg.loader.mode != "auto") return cfg.loader.mode == "device";
    const int64_t bytes = data.train->bytes() + data.val->bytes() + data.test->bytes();
    return static_cast<double>(bytes) <= 0.5 * static_cast<double>(freeMemoryBytes(device));
  }

  void checkSameModelFile(const nlohmann::json& info) {
    if (!info.contains(run_files::run_info::kModelSha256)) return;
    const std::string was = info.at(run_files::run_info::kModelSha256).get<std::string>();
    if (was != modelSha256)
      throw ModelError("model.path " + cfg.model.path + " changed since this run started (SHA-256 " +
                       was.substr(0, 16) + "… then, " + modelSha256.substr(0, 16) +
                       "… now): put the original file back, or start a new run");
  }

  void logData() {
    auto join = [](const std::vector<int64_t>& v) {
      std::string s;
      for (int64_t x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
      return s;
    };
    log::info("data (" + plan.format + "): " + std::to_string(data.train->size()) + " training, " +
              std::to_string(data.val->size()) + " validation, " + std::to_string(data.test->size()) +
              " test examples of " + data.input.text() + ", " + std::to_string(data.numClasses()) + " classes");
    log::info("examples per class (" + std::to_string(data.numClasses()) + " classes): training " +
              join(data.trainCounts) + "; test " + join(data.testCounts));
    log::info("training from " + plan.trainFrom + "; testing on " + plan.testFrom +
              (plan.valFrom.empty() ? std::string() : "; validating on " + plan.valFrom));
    if (plan.format == "image_folder")
      log::info(std::string(data.fromCache ? "decoded images read from the cache " : "images decoded in ") +
                (data.fromCache ? data.cacheFile : fmt(data.decodeSeconds, 3) + " s" +
                                                      (data.cacheFile.empty() ? "" : ", cached in " + data.cacheFile)));
    if (!data.skipped.empty()) {
      std::string list;
      for (size_t i = 0; i < data.skipped.size() && i < 10; ++i) list += "\n  " + data.skipped[i];
      log::warn("skipped " + std::to_string(data.skipped.size()) +
                " image(s) that could not be read (data.on_bad_file skip); the first ones:" + list);
    }
    if (plan.otherFiles > 0)
      log::info(std::to_string(plan.otherFiles) + " file(s) under " + cfg.data.root + " are not images and were left out");
  }

  void writeClasses() {
    nlohmann::json j = {{"classes", data.classNames},
                        {"counts", {{"train", data.trainCounts}, {"validation", data.valCounts}, {"test", data.testCounts}}}};
    if (!data.skipped.empty()) j["skipped_files"] = data.skipped;
    writeFileAtomically(runDir + "/" + run_files::kClasses, j.dump(1) + "\n");
  }

  void writeSettings() {
    namespace k = run_files::run_info;
    nlohmann::json info = {{k::kLibtorch, TORCH_VERSION},
                           {k::kDevice, describeDevice(device)},
                           {k::kTrainExamples, data.train->size()},
                           {k::kTotalSteps, steps.totalSteps},
                           {k::kNormalization, {{"mean", data.mean}, {"std", data.std}}},
                           {k::kInput, inputJson(data.input)},
                           {k::kClasses, data.classNames},
                           {k::kModel, model->description()},
                           {k::kData,
                            {{"format", plan.format},
                             {"train", data.train->size()},
                             {"validation", data.val->size()},
                             {"test", data.test->size()},
                             {"train_from", plan.trainFrom},
                             {"validation_from", plan.valFrom},
                             {"test_from", plan.testFrom},
                             {"skipped_files", data.skipped.size()},
                             {"decoded_cache", data.cacheFile}}},
                           {k::kLrChanges, counters.lrChanges}};
    if (data.kind == DataKind::Table) info[k::kFeatures] = plan.featureNames;
    if (!modelSha256.empty()) info[k::kModelSha256] = modelSha256;
    if (!parentInfo.is_null()) info[k::kParent] = parentInfo;
    if (!extensions.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& e : extensions) list.push_back(extensionJson(e));
      info[k::kContinued] = list;
    }
    if (ranks) info[k::kWorldSize] = ranks->world();
    if (writer) recorder->writeSettings(cfg, info);
  }

  CheckpointParts parts() { return CheckpointParts{*model, *optimizer, *scaler, skipped, counters, ema.get()}; }

  // Write-ahead: the metric rows up to this step reach the disk first, so a
  // checkpoint never stands for steps whose rows a crash lost (resume keeps
  // the rows up to the checkpoint's step and redoes the rest).
  void saveCheckpoints(bool best, bool atEvaluation = false) {
    // After a non-finite step the weights are suspect: the last checkpoint
    // stays the one to go back to (or the one kept when the run stops).
    if (rollbackDue || divergedAt) return;
    if (!writer) return;  // rank 0 writes the run's checkpoints
    Timed timed{writeSeconds};
    counters.wallSeconds = wallSeconds();
    counters.nonfiniteSteps = nonfiniteSeen;
    crashPoint("checkpoint-before-metrics-flush");
    recorder->sync();
    crashPoint("checkpoint-after-metrics-flush");
    const std::string dir = runDir + "/checkpoints";
    std::vector<std::string> paths{dir + "/last.ckpt"};
    if (best) paths.push_back(dir + "/best.ckpt");
    if (atEvaluation && cfg.output.keep_checkpoints) paths.push_back(runDir + "/" + run_files::stepCheckpoint(counters.step));
    saveCheckpoint(paths, parts());
  }

  // Under torchrun each rank's BatchNorm statistics come from its own share
  // of the batches; before an evaluation and the checkpoints all ranks make
  // together they are averaged over the ranks, so that every rank, and the
  // saved model, holds the same ones. A collective: every rank calls it at
  // the same step.
  void syncBatchNormStatistics() {
    if (!ranks || syncedBatchNorm) return;  // synchronised layers keep the same statistics everywhere
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> stats;
    for (const auto& b : model->buffers())
      if (b.is_floating_point()) stats.push_back(b);
    if (stats.empty()) return;
    std::vector<torch::Tensor> flat;
    for (const auto& b : stats) flat.push_back(b.reshape(-1));
    std::vector<torch::Tensor> sum{torch::cat(flat)};
    ranks->allReduceSum(sum, "the BatchNorm statistics' average at step " + std::to_string(counters.step));
    sum[0].div_(ranks->world());
    int64_t at = 0;
    for (auto& b : stats) {
      b.copy_(sum[0].slice(0, at, at + b.numel()).view(b.sizes()));
      at += b.numel();
    }
  }

  // Under torchrun: a stop (a signal, early stopping, a non-finite policy)
  // or a rollback seen by any rank is made by all at the same step, so their
  // exchanges stay in step. One small all-reduce on the host per step.
  void agreeWithOtherRanks() {
    if (!ranks) return;
    std::vector<torch::Tensor> flags{torch::tensor({stopRequested ? 1.0f : 0.0f, rollbackDue ? 1.0f : 0.0f})};
    ranks->allReduceSum(flags, "the stop check after step " + std::to_string(counters.step));
    const float* f = flags[0].data_ptr<float>();
    if (f[0] > 0 && !stopRequested) {
      stopRequested = true;
      log::info(ranks->describe() + ": another rank stopped at step " + std::to_string(counters.step) +
                "; stopping with it");
    }
    if (f[1] > 0) rollbackDue = true;
  }

  EvalOptions evalOptions() const {
    EvalOptions o;
    o.batchSize = cfg.evaluation.batch_size;
    o.autocast = autocast;
    o.autocastDtype = autocastDtype;
    o.channelsLast = cfg.performance.channels_last;
    o.classes = data.numClasses();
    o.group = ranks;
    return o;
  }
  // The same, reporting its batches as the phase ("evaluating on the test
  // set", 3 of 10): the status bar's evaluation progress.
  EvalOptions evalOptions(const std::string& what) {
    EvalOptions o = evalOptions();
    o.progress = [this, what](int64_t done, int64_t total) { setPhase(what, done, total); };
    return o;
  }
  // Clears the phase when an evaluation ends (an error included).
  struct PhaseScope {
    State& s;
    explicit PhaseScope(State& state) : s(state) {}
    ~PhaseScope() { s.setPhase(""); }
  };

  // Evaluates, writes eval/step-<N>.json (and the mistakes' thumbnails)
  // before the record is posted, so a front-end that sees the record finds
  // the file.
  EvalResult evaluateAndReport(bool validation) {
    const Dataset& set = validation ? *valSet : *testSet;
    const ExampleSet& hostSet = validation ? *data.val : *data.test;
    const std::vector<int64_t>& items = validation ? data.valItems : data.testItems;
    Timed timed{evalSeconds};
    Busy busy(busyWith, "evaluation");
    CudnnHeuristicsOnly heuristics;
    syncBatchNormStatistics();
    PhaseScope phase(*this);
    const EvalOutcome o = evaluate(*model, set, loaderOptions,
                                   evalOptions(validation ? "evaluating on the validation set" : "evaluating on the test set"),
                                   device);
    if (!writer) return {o.loss, o.accuracy};
    EvalReport r;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.split = validation ? "validation" : "test";
    r.classes = data.classNames;
    r.confusion = o.confusion;
    computeClassFigures(r);
    r.loss = o.loss;
    for (const auto& w : o.wrong)
      r.wrong.push_back({w.index, exampleSource(plan, items[static_cast<size_t>(w.index)]), w.truth, w.predicted,
                         w.confidence});
    const std::string folder = runDir + "/" + run_files::kEvalFolder;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    requireRealDirectory(folder);
    if (data.kind == DataKind::Image && !r.wrong.empty()) {
      std::vector<int64_t> idx;
      for (const auto& w : r.wrong) idx.push_back(w.index);
      const torch::Tensor images = hostSet.gather(torch::tensor(idx, torch::kInt64)).x;
      writePngFile(runDir + "/" + run_files::evalThumbnails(r.step),
                   thumbnailStrip(images, r.thumbnailHeight, r.thumbnailWidth));
      r.thumbnails = std::filesystem::path(run_files::evalThumbnails(r.step)).filename().string();
    }
    writeFileAtomically(runDir + "/" + run_files::evalReport(r.step), toJson(r).dump() + "\n");
    return {o.loss, o.accuracy};
  }

  // The weights' moving average (train.ema) on the validation or test set,
  // loss and accuracy only.
  EvalResult evaluateAverage(bool validation) {
    Timed timed{evalSeconds};
    CudnnHeuristicsOnly heuristics;
    EmaWeights::Swap swap(*ema, *model);
    PhaseScope phase(*this);
    const EvalOutcome o = evaluate(*model, validation ? *valSet : *testSet, loaderOptions,
                                   evalOptions("evaluating the weight average"), device);
    return {o.loss, o.accuracy};
  }

  // Moves the pending per-step figures to the host (one sync), posts and records them.
  void flushStats() {
    if (pending.empty()) return;
    torch::Tensor rows = torch::stack(pendingStats).to(torch::kCPU, torch::kFloat64);
    const double seconds = std::chrono::duration<double>(Clock::now() - windowStart).count();
    int64_t samples = 0;
    for (const auto& p : pending) samples += p.samples;
    trainSeconds += seconds;
    trainSamples += samples;
    const double sps = seconds > 0 ? static_cast<double>(samples) / seconds : MetricRecord::kNone;
    const MemoryFigures mem = memoryFigures(device);
    auto acc = rows.accessor<double, 2>();
    for (size_t i = 0; i < pending.size(); ++i) {
      MetricRecord r;
      r.kind = RecordKind::Train;
      r.step = pending[i].step;
      r.epoch = pending[i].epoch;
      r.wallSeconds = wallSeconds();
      r.trainLoss = acc[i][0];
      r.lr = pending[i].lr;
      r.gradNorm = acc[i][1];
      if (scaler->enabled()) r.lossScale = acc[i][2];
      r.skippedSteps = static_cast<int64_t>(acc[i][3]);
      const auto count = static_cast<int64_t>(acc[i][4]);
      r.samplesPerSecond = sps;
      r.stepMillis = 1000.0 * seconds / static_cast<double>(pending.size());
      r.memAllocatedMiB = mem.allocatedMiB;
      r.memReservedMiB = mem.reservedMiB;
      r.memPeakMiB = mem.peakMiB;
      r.microBatch = pending[i].microBatch;
      post(r);
      lastTrainLoss = r.trainLoss;
      if (count > nonfiniteSeen) {
        nonfiniteSeen = count;
        onNonFinite(r, count);
      }
    }
    ch.samplesPerSecond = sps;
    ch.wallSeconds = wallSeconds();
    ch.lastLoss = lastTrainLoss;
    pending.clear();
    pendingStats.clear();
    if (recorder) recorder->flushIfDue();
    windowStart = Clock::now();
    if (windowStart - lastTrim >= std::chrono::seconds(30)) trimHeap();  // counted as training time
  }

  void post(const MetricRecord& r) {
    if (recorder) recorder->append(r);
    ch.post(r);
  }

  void evalAndCheckpoint() {
    flushStats();
    if (rollbackDue || divergedAt) return;  // no evaluation of weights about to be dropped
    const bool haveVal = valSet->size() > 0;
    EvalResult e = evaluateAndReport(haveVal);
    if (!haveVal) lastTestEval = {counters.step, e};
    MetricRecord r;
    r.kind = RecordKind::Eval;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.wallSeconds = wallSeconds();
    r.evalLoss = e.loss;
    r.evalAccuracy = e.accuracy;
    if (ema && ema->started()) {
      const EvalResult avg = evaluateAverage(haveVal);
      r.emaEvalLoss = avg.loss;
      r.emaEvalAccuracy = avg.accuracy;
      log::info("step " + std::to_string(counters.step) + " weight average (EMA of " +
                std::to_string(ema->updates()) + " updates): loss " + fmt(avg.loss) + " accuracy " +
                fmt(avg.accuracy));
    }
    post(r);
    lastEvalLoss = e.loss;
    const bool betterAccuracy = !(e.accuracy <= counters.bestAccuracy);
    if (betterAccuracy) counters.bestAccuracy = e.accuracy;
    log::info("step " + std::to_string(counters.step) + " " + (haveVal ? "validation" : "test") + " loss " +
              fmt(e.loss) + " accuracy " + fmt(e.accuracy));
    // With early stopping, the best checkpoint is the best by its metric.
    const bool early = cfg.train.early_stopping.metric != "off";
    const bool best = early ? earlyStoppingImproved(e) : cfg.output.save_best && betterAccuracy;
    saveCheckpoints(best, /*atEvaluation=*/true);
    if (early) checkEarlyStop(haveVal);
    trimHeap();
    windowStart = Clock::now();  // evaluation time is not training time
  }

  // Gives the C heap's free pages back to the system. The step's and the
  // evaluations' large buffers are freed each time, and glibc keeps such
  // pages, fragmented, for ever: a 30-minute soak (bench_soak) grew 12 % with
  // the heap in use flat. Called after each evaluation and at a metrics flush
  // at most every 30 s: it took 11-37 ms on the 2-core VM, so under 0.15 % of
  // the time. With tcmalloc (STUDIO_TCMALLOC) its page heap's free spans go
  // back instead; between these calls it keeps them, which is its speed.
  Clock::time_point lastTrim = Clock::now();
  // Not in sanitizer builds: their allocator replaces glibc's, whose arenas
  // malloc_trim would walk from a thread that never used them (a crash under
  // ASan from a thread, google/sanitizers#1721; under TSan its report may hang).
  void trimHeap() {
#if defined(STUDIO_TCMALLOC)
    MallocExtension_ReleaseFreeMemory();
#elif defined(__GLIBC__) && !defined(STUDIO_SANITIZED)
    malloc_trim(0);
#endif
    lastTrim = Clock::now();
  }

  bool earlyStoppingMinimises() const {
    const auto& es = cfg.train.early_stopping;
    return es.mode == "auto" ? es.metric == "eval_loss" : es.mode == "min";
  }

  // Counts this evaluation for train.early_stopping; true when it is the best.
  bool earlyStoppingImproved(const EvalResult& e) {
    const auto& es = cfg.train.early_stopping;
    const double v = es.metric == "eval_loss" ? e.loss : e.accuracy;
    const double best = counters.earlyBest;
    const bool improved = std::isfinite(v) && (std::isnan(best) || (earlyStoppingMinimises() ? v < best - es.min_delta
                                                                                              : v > best + es.min_delta));
    if (improved) {
      counters.earlyBest = v;
      counters.earlyBestStep = counters.step;
      counters.earlyBadEvals = 0;
    } else {
      ++counters.earlyBadEvals;
    }
    return improved;
  }

  void checkEarlyStop(bool validation) {
    const auto& es = cfg.train.early_stopping;
    if (counters.earlyBadEvals < es.patience || counters.step >= steps.totalSteps) return;
    const std::string what = std::string(validation ? "validation " : "test ") +
                             (es.metric == "eval_loss" ? "loss" : "accuracy");
    earlyStopReason = what + " has not improved" +
                      (es.min_delta > 0 ? " by more than " + fmt(es.min_delta) : std::string()) + " for " +
                      std::to_string(counters.earlyBadEvals) + " evaluations (train.early_stopping.patience " +
                      std::to_string(es.patience) + "); best " + fmt(counters.earlyBest) + " at step " +
                      std::to_string(counters.earlyBestStep) + ", kept in checkpoints/best.ckpt";
    stopRequested = true;
    MetricRecord r;
    r.kind = RecordKind::EarlyStop;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.wallSeconds = wallSeconds();
    post(r);
    log::info("early stop at step " + std::to_string(counters.step) + ": " + earlyStopReason);
  }

  // Applies queued commands; blocks (on the condition variable) while paused.
  void pollCommands() {
    bool waited = false;
    for (;;) {
      Command c;
      while (ch.commands.try_dequeue(c)) {
        switch (c.type) {
          case Command::Pause:
            if (!paused) {
              flushStats();
              if (recorder) recorder->flush();
              log::info("paused at step " + std::to_string(counters.step));
            }
            paused = true;
            ch.state = SessionState::Paused;
            break;
          case Command::Resume:
            if (paused) log::info("resumed at step " + std::to_string(counters.step));
            paused = false;
            ch.state = SessionState::Running;
            break;
          case Command::Stop:
            stopRequested = true;
            paused = false;
            break;
          case Command::SaveNow:
            flushStats();
            saveCheckpoints(false);
            log::info("checkpoint saved at step " + std::to_string(counters.step));
            ++ch.checkpointsSaved;
            break;
          case Command::SetLr: setLearningRate(c.value); break;
        }
      }
      if (!paused) break;
      std::unique_lock<std::mutex> lock(ch.wakeMutex);
      ch.wake.wait(lock, [&] { return ch.commands.peek() != nullptr; });
      waited = true;
    }
    if (waited) windowStart = Clock::now();  // paused time is not training time
  }

  void setLearningRate(double lr) {
    if (!(lr > 0) || !std::isfinite(lr)) {
      log::warn("ignored a learning-rate change to " + fmt(lr) + ": it must be > 0");
      return;
    }
    flushStats();
    const double scheduled = schedule->lr(counters.step);
    counters.lrMultiplier = lr / scheduled;
    counters.lrChanges.push_back({{"step", counters.step}, {"lr", lr}, {"multiplier", counters.lrMultiplier}});
    MetricRecord r;
    r.kind = RecordKind::LrChange;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.wallSeconds = wallSeconds();
    r.lr = lr;
    post(r);
    writeSettings();
    log::info("learning rate set to " + fmt(lr) + " at step " + std::to_string(counters.step) +
              " (the schedule continues, scaled by " + fmt(counters.lrMultiplier) + ")");
  }

  // The micro-batches' forward and backward passes; returns the group's mean loss.
  torch::Tensor forwardBackward(const std::vector<torch::Tensor>& xs, const std::vector<torch::Tensor>& ys,
                                int64_t groupSamples) {
    torch::Tensor lossSum;
    // Under torchrun the last backward pass of the group starts the
    // gradient exchange as it goes; a rank's share may be empty.
    // With synchronised BatchNorm every rank runs every pass, an empty one
    // too (with a loss of 0), so that their statistics' exchanges pair up.
    size_t last = xs.size();
    for (size_t i = 0; i < xs.size(); ++i)
      if (ys[i].size(0) > 0 || syncedBatchNorm) last = i;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (ys[i].size(0) == 0 && !syncedBatchNorm) continue;
      if (reducer && i == last) reducer->arm();
      torch::Tensor logits;
      {
        AutocastScope ac(device.type(), autocast, autocastDtype);
        logits = model->forward(xs[i]);
      }
      if (ys[i].size(0) == 0) {
        (logits.to(torch::kFloat32).sum() * 0).backward();
        continue;
      }
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), ys[i]);
      // Each micro-batch weighs by its share of the group's samples, so the
      // accumulated gradient is the mean over the whole group, also for a
      // short last group.
      const double share = static_cast<double>(ys[i].size(0)) / static_cast<double>(groupSamples);
      // (A whole group in one pass weighs 1: no multiplication, forward or
      // backward, in the recorded step either.)
      if (share != 1.0) loss = loss * share;
      scaler->scale(loss).backward();
      torch::Tensor contribution = loss.detach();
      lossSum = lossSum.defined() ? lossSum + contribution : contribution;
    }
    if (!lossSum.defined()) lossSum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
    return lossSum;
  }

  // Unscales, checks, clips and applies the gradients, all on the device;
  // returns the step's figures [loss, grad norm, scale, skipped, non-finite].
  // `graphed`: the learning rate and momentum come from device scalars.
  torch::Tensor updateWeights(torch::Tensor meanLoss, bool graphed, double lr, std::optional<double> momentum) {
    if (reducer) {
      // Every rank's gradients and loss, summed: each rank weighed its
      // examples by 1 / (the global group's examples), so these are the
      // global means, the same on every rank (and so are the inf check,
      // the loss scale and the clipping that follow).
      reducer->finish(counters.step + 1);
      std::vector<torch::Tensor> loss{meanLoss.to(torch::kFloat32).reshape({1})};
      ranks->allReduceSum(loss, "the loss all-reduce of step " + std::to_string(counters.step + 1));
      meanLoss = loss[0].reshape({});
    }
    std::vector<torch::Tensor> grads = optimizer->grads();
    scaler->unscale(grads);
    // A step whose loss or gradients are not finite is never applied. With
    // fp16 an overflowing gradient is the loss scaler's business (it knows
    // which, and backs off); anything else is an event. Without the scaler
    // the same AMP kernel checks the gradients and the loss together, with
    // a scale of 1 (one pass over the list). All on the device.
    torch::Tensor skip, event;
    if (scaler->enabled()) {
      event = meanLoss.isfinite().logical_not().to(torch::kFloat32);
      skip = torch::maximum(scaler->foundInf(), event);
    } else {
      torch::NoGradGuard noGrad;
      gradsBad.zero_();
      std::vector<torch::Tensor> checked = grads;
      checked.push_back(meanLoss);
      at::_amp_foreach_non_finite_check_and_unscale_(checked, gradsBad, unitScale);
      skip = event = gradsBad;
    }
    torch::Tensor norm = clipGradNorm(grads, cfg.train.grad_clip_norm);
    if (graphed) optimizer->step(lrDevice, momentumDevice, skip);
    else optimizer->step(lr, momentum, skip);
    at::_foreach_add_(std::vector<torch::Tensor>{skipped, nonfinite}, std::vector<torch::Tensor>{skip, event});
    if (scaler->enabled()) scaler->update();
    return torch::stack({meanLoss.to(torch::kFloat32), norm.to(device), scaler->scaleTensor(), skipped, nonfinite});
  }

  // `full`: k full micro-batches, the shape every other step has; cuDNN
  // autotunes that one only.
  torch::Tensor eagerStep(const std::vector<Batch>& group, int64_t groupSamples, double lr,
                          std::optional<double> momentum, bool full = true) {
    CudnnHeuristicsOnly heuristics(!full);
    // After recording, the gradients live in the graph's buffers: they are
    // zeroed in place, never freed, so the graph's pointers stay valid.
    if (graph.captured()) optimizer->zeroGrad(false);
    std::vector<torch::Tensor> xs, ys;
    for (const auto& b : group) {
      if (counters.microSplit > 1) {
        const int64_t part = microBatch();
        for (const auto& x : b.x.split(part)) xs.push_back(x);
        for (const auto& y : b.y.split(part)) ys.push_back(y);
      } else {
        xs.push_back(b.x);
        ys.push_back(b.y);
      }
    }
    torch::Tensor row = updateWeights(forwardBackward(xs, ys, groupSamples), false, lr, momentum);
    optimizer->zeroGrad(graph.captured() ? false : cfg.performance.zero_grad_to_none);
    return row;
  }

  torch::Tensor graphStep(const std::vector<Batch>& group, int64_t groupSamples, double lr,
                          std::optional<double> momentum) {
    if (!graph.captured()) {
      if (graphWarmupDone < kGraphWarmup) {
        ++graphWarmupDone;
        return eagerStep(group, groupSamples, lr, momentum);
      }
      staticX.clear();
      staticY.clear();
      for (const auto& b : group) {
        staticX.push_back(b.x.clone());
        staticY.push_back(b.y.clone());
      }
      optimizer->zeroGrad(true);  // the recorded backward writes fresh gradients
      try {
        graph.capture([&] { staticRow = updateWeights(forwardBackward(staticX, staticY, groupSamples), true, lr, momentum); });
      } catch (const std::runtime_error& e) {
        const std::string why = std::string("recording the step failed: ") + e.what();
        if (cfg.performance.cuda_graphs == "on")
          throw std::runtime_error("performance.cuda_graphs is on, but " + why + "; set it to auto or off");
        log::warn("CUDA graphs off: " + why);
        graphStatus = "off: " + why;
        graphWanted = false;
        staticX.clear();
        staticY.clear();
        staticRow.reset();
        optimizer->zeroGrad(true);
        return eagerStep(group, groupSamples, lr, momentum);
      }
      graphStatus = "on (recorded at step " + std::to_string(counters.step + 1) + ")";
      log::info("CUDA graphs: the whole step is recorded at step " + std::to_string(counters.step + 1) +
                " and replayed from now on");
    } else {
      for (size_t i = 0; i < group.size(); ++i) {
        staticX[i].copy_(group[i].x, /*non_blocking=*/true);
        staticY[i].copy_(group[i].y, /*non_blocking=*/true);
      }
    }
    // After a capture too: recording runs nothing, the replay reads these.
    lrDevice.fill_(lr);
    if (momentumDevice.defined()) momentumDevice.fill_(momentum.value_or(0.0));
    graph.replay();
    return staticRow.clone();
  }

  // One optimizer step; with memory.oom_backoff, a step that runs out of
  // memory is made again with the micro-batch halved (the loader's batches
  // split in twice as many forward passes: the same effective batch, the same
  // schedule), until it fits or the micro-batch is 1.
  //
  // Until a step of this size has succeeded (the first step, the first after
  // a back-off) the BatchNorm statistics and the random state are kept before
  // it, so that a failed try leaves no trace: the run then equals one
  // started with the smaller micro-batch and the larger accumulation. Later
  // steps repeat a shape that fitted and are not copied.
  bool stepSizeProven = false;
  torch::Tensor stepOrBackOff(const std::vector<Batch>& group, int64_t groupSamples, double lr,
                              std::optional<double> momentum, bool full) {
    while (true) {
      std::vector<torch::Tensor> kept;
      torch::Tensor cpuRng, deviceRng;
      if (cfg.memory.oom_backoff && !stepSizeProven) {
        torch::NoGradGuard noGrad;
        for (const auto& b : model->buffers()) kept.push_back(b.clone());
        cpuRng = at::detail::getDefaultCPUGenerator().get_state();
        if (device.is_cuda()) deviceRng = at::globalContext().defaultGenerator(device).get_state();
      }
      try {
        torch::Tensor row = graphWanted && full ? graphStep(group, groupSamples, lr, momentum)
                                                : eagerStep(group, groupSamples, lr, momentum, full);
        stepSizeProven = true;
        return row;
      } catch (const c10::OutOfMemoryError& e) {
        const int64_t micro = microBatch();
        // Under torchrun the other ranks are already exchanging this step's
        // gradients: the run fails with the usual advice instead.
        if (!cfg.memory.oom_backoff || micro <= 1 || graph.captured() || ranks) throw;
        // What the failed try left: its gradients, on a GPU the cached
        // blocks, and (when kept) its BatchNorm statistics and random draws.
        optimizer->zeroGrad(true);
        if (!kept.empty() || cpuRng.defined()) {
          torch::NoGradGuard noGrad;
          const auto now = model->buffers();
          for (size_t i = 0; i < kept.size(); ++i) now[i].copy_(kept[i]);
          at::Generator cpuGen = at::detail::getDefaultCPUGenerator();
          cpuGen.set_state(cpuRng);
          if (deviceRng.defined()) {
            at::Generator deviceGen = at::globalContext().defaultGenerator(device);
            deviceGen.set_state(deviceRng);
          }
        }
        if (graphWanted) {
          graphWanted = false;  // a recording that ran out of memory is not used
          graphStatus = "off: out of memory while recording the step";
        }
        if (device.is_cuda()) at::accelerator::emptyCache();
        counters.microSplit *= 2;
        const int64_t now = microBatch();
        MetricRecord r;
        r.kind = RecordKind::OomBackoff;
        r.step = counters.step + 1;
        r.epoch = counters.epoch;
        r.wallSeconds = wallSeconds();
        r.microBatch = now;
        post(r);
        log::warn("step " + std::to_string(counters.step + 1) + " ran out of memory on " + describeDevice(device) +
                  " with micro-batches of " + std::to_string(micro) + " (" + e.what_without_backtrace() +
                  "); going on with micro-batches of " + std::to_string(now) + ", " +
                  std::to_string(cfg.train.accumulation_steps * counters.microSplit) +
                  " per optimizer step (the same effective batch; memory.oom_backoff)");
      }
    }
  }

  // A step whose loss or gradients were not finite, seen at a flush.
  void onNonFinite(const MetricRecord& row, int64_t count) {
    MetricRecord r;
    r.kind = RecordKind::NonFinite;
    r.step = row.step;
    r.epoch = row.epoch;
    r.wallSeconds = row.wallSeconds;
    r.trainLoss = row.trainLoss;
    r.lr = row.lr;
    post(r);
    lastNonfiniteStep = row.step;
    const std::string& policy = cfg.train.on_nonfinite;
    if (count <= 10 || count % 100 == 0)
      log::warn("step " + std::to_string(row.step) + ": the loss or the gradients are not finite (loss " +
                fmt(row.trainLoss) + ", learning rate " + fmt(row.lr) + "); the step was not applied" +
                (policy == "skip" ? " (train.on_nonfinite skip)" : "") +
                (count == 10 ? "; further ones are logged every 100th" : ""));
    if (policy == "stop") {
      if (!divergedAt) divergedAt = row.step;  // the first one
      stopRequested = true;
    } else if (policy == "rollback") {
      rollbackDue = true;
    }
  }

  // Back to the last checkpoint with the learning rate scaled down
  // (train.on_nonfinite rollback); the rows after it no longer stand.
  void rollback() {
    rollbackDue = false;
    const std::string path = runDir + "/" + run_files::kLastCheckpoint;
    if (counters.rollbacks >= cfg.train.max_rollbacks || !std::filesystem::exists(path)) {
      log::error(counters.rollbacks >= cfg.train.max_rollbacks
                     ? "the loss is still not finite after " + std::to_string(counters.rollbacks) +
                           " rollback(s) (train.max_rollbacks); stopping"
                     : "the loss is not finite and there is no checkpoint yet to roll back to; stopping");
      divergedAt = lastNonfiniteStep;
      stopRequested = true;
      return;
    }
    const int64_t rollbacks = counters.rollbacks + 1;
    const nlohmann::json lrChanges = counters.lrChanges;
    loadCheckpoint(path, parts(), device);
    counters.rollbacks = rollbacks;
    counters.nonfiniteSteps = nonfiniteSeen;
    nonfinite.fill_(static_cast<double>(nonfiniteSeen));
    counters.lrMultiplier *= cfg.train.rollback_lr_factor;
    const double lr = schedule->lr(counters.step) * counters.lrMultiplier;
    counters.lrChanges = lrChanges;
    counters.lrChanges.push_back(
        {{"step", counters.step}, {"lr", lr}, {"multiplier", counters.lrMultiplier}, {"rollback", rollbacks}});
    if (recorder) recorder->truncateAfter(counters.step);
    MetricRecord r;
    r.kind = RecordKind::Rollback;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.wallSeconds = wallSeconds();
    r.lr = lr;
    post(r);
    writeSettings();
    ch.step = counters.step;
    ch.epoch = counters.epoch;
    log::warn("rolled back to the checkpoint of step " + std::to_string(counters.step) + " (rollback " +
              std::to_string(rollbacks) + " of at most " + std::to_string(cfg.train.max_rollbacks) +
              "); the learning rate is scaled by " + fmt(counters.lrMultiplier) + ", now " + fmt(lr));
    windowStart = Clock::now();
  }

  // The learning-rate range test: exponentially growing rates, one optimizer
  // step each (accumulation included), the loss read every step (a sync per
  // step is the price of stopping on divergence), smoothed as fastai does.
  double lrFindSuggestion = MetricRecord::kNone, lrFindMinimum = MetricRecord::kNone;
  std::string lrFindEnd;
  void lrFindLoop(const LrFindOptions& o) {
    const int64_t nb = loader->batchesPerEpoch();
    graphWanted = false;
    graphStatus = "off (learning-rate range test)";
    steps.totalSteps = o.steps;
    ch.totalSteps = o.steps;
    ch.state = SessionState::Running;
    std::vector<double> lrs, smoothed;
    double avg = 0, best = std::numeric_limits<double>::infinity();
    lrFindEnd = "swept " + fmt(o.lrMin) + " to " + fmt(o.lrMax) + " in " + std::to_string(o.steps) + " steps";
    windowStart = Clock::now();
    while (counters.step < o.steps && !stopRequested) {
      loader->startEpoch(counters.epoch, counters.batchInEpoch);
      while (counters.batchInEpoch < nb && counters.step < o.steps && !stopRequested) {
        int64_t groupSamples = 0;
        bool full = false;
        const std::vector<Batch> group = nextGroup(groupSamples, full);
        const double t = static_cast<double>(counters.step) / static_cast<double>(o.steps - 1);
        const double lr = o.lrMin * std::pow(o.lrMax / o.lrMin, t);
        pendingStats.push_back(stepOrBackOff(group, groupSamples, lr, std::nullopt, full));
        pending.push_back({counters.step + 1, counters.epoch, lr, groupSamples, microBatch()});
        ++counters.step;
        ch.step = counters.step;
        const double loss = pendingStats.back()[0].item<double>();
        flushStats();
        const bool epochDone = closeEpochIfDone();
        if (!std::isfinite(loss) || divergedAt) {
          lrFindEnd = "the loss or the gradients are not finite at learning rate " + fmt(lr);
          stopRequested = true;
          break;
        }
        pollCommands();
        if (ch.stopAsked) {
          lrFindEnd = "stopped";
          break;
        }
        avg = o.beta * avg + (1 - o.beta) * loss;
        const double s = avg / (1 - std::pow(o.beta, static_cast<double>(lrs.size() + 1)));
        lrs.push_back(lr);
        smoothed.push_back(s);
        best = std::min(best, s);
        if (s > o.divergeFactor * best) {
          lrFindEnd = "the smoothed loss " + fmt(s) + " passed " + fmt(o.divergeFactor) + " times its lowest (" +
                      fmt(best) + ") at learning rate " + fmt(lr);
          stopRequested = true;
        }
        if (epochDone) break;  // the loader starts the next epoch
      }
    }
    flushStats();
    const bool stoppedByPerson = lrFindEnd == "stopped";
    stopRequested = stoppedByPerson;
    // The steepest fall of the smoothed loss against log(lr), before its
    // lowest point; the first tenth of the sweep (at least 5 steps) is left
    // out, as fastai's plot does: the average has not settled there.
    const size_t skip = std::max<size_t>(5, static_cast<size_t>(o.steps / 10));
    if (smoothed.size() >= skip + 3) {
      size_t lowest = skip;
      for (size_t i = skip; i < smoothed.size(); ++i)
        if (smoothed[i] < smoothed[lowest]) lowest = i;
      lrFindMinimum = lrs[lowest];
      double steepest = 0;
      for (size_t i = skip + 1; i <= lowest; ++i) {
        const double slope = (smoothed[i] - smoothed[i - 1]) / (std::log(lrs[i]) - std::log(lrs[i - 1]));
        if (slope < steepest) {
          steepest = slope;
          lrFindSuggestion = lrs[i];
        }
      }
      if (!std::isfinite(lrFindSuggestion)) lrFindSuggestion = lrFindMinimum / 10;
    }
    log::info("learning-rate range test: " + lrFindEnd + "; suggested " + fmt(lrFindSuggestion) +
              " (steepest fall of the smoothed loss), lowest loss at " + fmt(lrFindMinimum));
  }

  // batch-find: one training step (forward, backward, optimizer step) of n
  // zero examples; false when it ran out of memory (all of it freed again).
  RunSummary batchFound;  // its batchFind* fields
  bool stepFits(int64_t n) {
    bool fits = true;
    try {
      CudnnHeuristicsOnly heuristics;  // no autotuning of shapes the run never uses
      torch::Tensor x = sampleInput(data.input, n, device);
      if (cfg.performance.channels_last && x.dim() == 4) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      const torch::Tensor y = torch::zeros({n}, torch::TensorOptions().dtype(torch::kLong).device(device));
      optimizer->zeroGrad(true);
      const torch::Tensor row = updateWeights(forwardBackward({x}, {y}, n), false, cfg.optimizer.lr, std::nullopt);
      (void)row[0].item<double>();  // the step has run: a GPU reports its errors by here
    } catch (const c10::OutOfMemoryError&) {
      fits = false;
    }
    optimizer->zeroGrad(true);
    if (!fits && device.is_cuda()) at::accelerator::emptyCache();
    batchFound.batchFindTried.emplace_back(n, fits);
    log::info("batch-find: a micro-batch of " + std::to_string(n) + (fits ? " fits" : " runs out of memory"));
    ch.step = static_cast<int64_t>(batchFound.batchFindTried.size());
    return fits;
  }

  void batchFindLoop(const BatchFindOptions& o) {
    graphWanted = false;
    graphStatus = "off (batch-find)";
    ch.state = SessionState::Running;
    ch.totalSteps = 0;
    for (int64_t n = 1; n < o.maxBatch; n *= 2) ++ch.totalSteps;
    ch.totalSteps += 5;
    if (device.is_cuda()) {
      const auto [free, total] = at::accelerator::getMemoryInfo(device.index());
      batchFound.batchFindLimitMiB = static_cast<double>(total) / (1 << 20);
    } else if (cpuMemory) {
      batchFound.batchFindLimitMiB = static_cast<double>(cpuMemory->limitBytes()) / (1 << 20);
    }
    const std::string where = describeDevice(device) + (std::isnan(batchFound.batchFindLimitMiB)
                                                            ? std::string()
                                                            : " (" + fmt(batchFound.batchFindLimitMiB) + " MiB)");
    // Doubling: lo fits, hi does not (0: not found yet).
    int64_t lo = 0, hi = 0;
    for (int64_t n = 1; !stopRequested; n = std::min(2 * n, o.maxBatch)) {
      if (!stepFits(n)) {
        hi = n;
        break;
      }
      lo = n;
      if (n == o.maxBatch) break;
      pollCommands();
    }
    // Then bisection, to within 1/16 of what fits.
    while (lo > 0 && hi > 0 && hi - lo > std::max<int64_t>(1, lo / 16) && !stopRequested) {
      const int64_t mid = lo + (hi - lo) / 2;
      (stepFits(mid) ? lo : hi) = mid;
      pollCommands();
    }
    if (stopRequested) return;
    batchFound.batchFindLargest = lo;
    if (lo <= 1) {
      throw InputError(std::string(lo == 0 ? "not even a micro-batch of 1" : "only a micro-batch of 1") +
                       " fits in the memory of " + where + " with " + model->description() + ", " +
                       cfg.precision.mode + " and " + cfg.optimizer.kind +
                       ": use a smaller model, precision.mode bf16 or fp16, memory.activation_checkpointing" +
                       (cpuMemory ? ", or a higher memory.cpu_limit_mib" : ""));
    }
    // The effective batch the settings ask for, in micro-batches that fit:
    // the largest divisor of it that is at most lo.
    const int64_t effective = int64_t(cfg.train.batch_size) * cfg.train.accumulation_steps;
    int64_t micro = std::min(lo, effective);
    while (effective % micro != 0) --micro;
    batchFound.batchFindMicro = micro;
    batchFound.batchFindAccumulation = effective / micro;
    log::info("batch-find: the largest micro-batch that fits is " + std::to_string(lo) +
              (hi > 0 ? " (" + std::to_string(hi) + " does not)" : " (the --max asked for)") + " on " + where +
              "; for the effective batch of " + std::to_string(effective) + ": train.batch_size " +
              std::to_string(micro) + ", train.accumulation_steps " + std::to_string(effective / micro));
  }

  // The next step's micro-batches from the loader: accumulation_steps of
  // them, fewer at an epoch's end. `samples`: their examples; `full`: k whole
  // batches, the shape every other step has (the one recorded and tuned).
  std::vector<Batch> nextGroup(int64_t& samples, bool& full) {
    const int64_t k = cfg.train.accumulation_steps;
    const int64_t b = cfg.train.batch_size;
    const int64_t groupEnd = std::min(counters.batchInEpoch + k, loader->batchesPerEpoch());
    samples = 0;  // of all ranks
    full = groupEnd - counters.batchInEpoch == k;
    std::vector<Batch> group;
    for (int64_t i = counters.batchInEpoch; i < groupEnd; ++i) {
      Batch batch;
      if (!loader->next(batch)) throw std::logic_error("loader ended before its epoch");
      full = full && batch.size() == b;
      samples += batch.globalSize;
      group.push_back(std::move(batch));
    }
    counters.batchInEpoch = groupEnd;
    return group;
  }

  // After a step: moves the position to the next epoch when this one is
  // done; true then.
  bool closeEpochIfDone() {
    if (counters.batchInEpoch < loader->batchesPerEpoch()) return false;
    ++counters.epoch;
    counters.batchInEpoch = 0;
    ch.epoch = counters.epoch;
    return true;
  }

  void trainLoop() {
    const int64_t nb = loader->batchesPerEpoch();
    const int64_t stopAt = options.stopAtStep > 0 ? options.stopAtStep : steps.totalSteps;
    windowStart = Clock::now();
    ch.state = SessionState::Running;
    pollCommands();
    while (counters.step < steps.totalSteps && !stopRequested) {
      const int64_t stepBefore = counters.step;
      loader->startEpoch(counters.epoch, counters.batchInEpoch);
      while (counters.batchInEpoch < nb && counters.step < steps.totalSteps && !stopRequested) {
        int64_t groupSamples = 0;
        bool full = false;
        std::vector<Batch> group = nextGroup(groupSamples, full);
        const double lr = schedule->lr(counters.step) * counters.lrMultiplier;
        const std::optional<double> momentum = schedule->momentum(counters.step);
        pendingStats.push_back(stepOrBackOff(group, groupSamples, lr, momentum, full));
        group.clear();
        pending.push_back({counters.step + 1, counters.epoch, lr, groupSamples, microBatch()});
        ++counters.step;
        ch.step = counters.step;
        const auto& e = cfg.train.ema;
        if (ema && counters.step >= e.start_step && (counters.step - e.start_step) % e.every_steps == 0)
          ema->update(*model);

        if (pending.size() >= static_cast<size_t>(cfg.train.log_every_steps)) flushStats();
        const bool epochDone = closeEpochIfDone();
        const int64_t every = cfg.evaluation.every_steps;
        const bool evalDue = every > 0 ? counters.step % every == 0 : epochDone;
        if (evalDue || counters.step == steps.totalSteps) {
          evalAndCheckpoint();
        } else if (cfg.output.checkpoint_every_steps > 0 && counters.step % cfg.output.checkpoint_every_steps == 0) {
          flushStats();
          syncBatchNormStatistics();
          saveCheckpoints(false);
        }
        if (counters.step >= stopAt && counters.step < steps.totalSteps) stopRequested = true;
        pollCommands();
        crashPoint("train-step");
        agreeWithOtherRanks();
        if (rollbackDue) {
          flushStats();
          rollback();
          break;  // the loader starts again where the checkpoint was
        }
        if (epochDone) break;
      }
      // An epoch that trains nothing would repeat for ever (a rollback goes back).
      if (counters.step == stepBefore && !stopRequested && counters.rollbacks == 0)
        throw std::logic_error("no step was made in epoch " + std::to_string(counters.epoch) + " (batch " +
                               std::to_string(counters.batchInEpoch) + " of " + std::to_string(nb) + ")");
    }
    flushStats();
  }

  RunSummary finish(const std::string& status, const std::string& error) {
    RunSummary s;
    s.runDir = runDir;
    s.status = status;
    s.error = error;
    s.device = describeDevice(device);
    s.steps = counters.step;
    s.totalSteps = steps.totalSteps;
    s.epochs = counters.epoch;
    s.bestEvalAccuracy = counters.bestAccuracy < 0 ? MetricRecord::kNone : counters.bestAccuracy;
    s.finalTrainLoss = lastTrainLoss;
    s.finalEvalLoss = lastEvalLoss;
    s.samplesPerSecond = trainSeconds > 0 ? static_cast<double>(trainSamples) / trainSeconds : MetricRecord::kNone;
    s.wallSeconds = wallSeconds();
    s.nonfiniteSteps = nonfiniteSeen;
    s.rollbacks = counters.rollbacks;
    s.cudaGraphs = graphStatus;
    s.setupSeconds = setupSeconds;
    s.trainSeconds = trainSeconds;
    s.evalSeconds = evalSeconds;
    s.writeSeconds = writeSeconds;
    if (ranks) {
      s.rank = ranks->rank();
      s.worldSize = ranks->world();
    }
    if (start.batchFind) {
      s.batchFindLargest = batchFound.batchFindLargest;
      s.batchFindMicro = batchFound.batchFindMicro;
      s.batchFindAccumulation = batchFound.batchFindAccumulation;
      s.batchFindLimitMiB = batchFound.batchFindLimitMiB;
      s.batchFindTried = batchFound.batchFindTried;
    }
    if (counters.microSplit > 1) s.microBatch = microBatch();
    if (cfg.train.early_stopping.metric != "off") {
      s.earlyStoppingMetric = cfg.train.early_stopping.metric;
      s.earlyStoppingBest = counters.earlyBest;
      s.earlyStoppingBestStep = counters.earlyBestStep;
      s.earlyStopReason = earlyStopReason;
    }
    try {
      if (skipped.defined()) s.skippedSteps = static_cast<int64_t>(skipped.item<float>());
    } catch (const std::exception&) {
      // A broken device cannot report it; the error says why.
    }
    return s;
  }
};

Trainer::Trainer(TrainConfig config, std::string runDir, RunStart start, StartOptions options, SessionChannel& channel)
    : m_s(std::make_unique<State>(std::move(config), std::move(runDir), std::move(start), options, channel)) {}

Trainer::~Trainer() = default;

RunSummary Trainer::run() {
  State& s = *m_s;
  s.started = Clock::now();
  std::string status = "completed", error;
  bool badInput = false;
  RunSummary summary;
  try {
    {
      State::Timed timed{s.setupSeconds};
      State::Busy busy(s.busyWith, "setup");
      s.setup();
    }
    if (s.start.lrFind) {
      s.lrFindLoop(*s.start.lrFind);
    } else if (s.start.batchFind) {
      s.batchFindLoop(*s.start.batchFind);
    } else {
      s.trainLoop();
    }
    if (s.start.batchFind) {
      status = s.stopRequested ? "stopped" : "completed";
    } else if (s.start.lrFind) {
      status = s.stopRequested && s.lrFindEnd == "stopped" ? "stopped" : "completed";
    } else if (s.divergedAt) {
      status = "failed";
      error = "the training loss or gradients became NaN or infinite at step " + std::to_string(*s.divergedAt) +
              (s.cfg.train.on_nonfinite == "rollback"
                   ? " and rolling back did not help (train.max_rollbacks " + std::to_string(s.cfg.train.max_rollbacks) + ")"
                   : " (train.on_nonfinite " + s.cfg.train.on_nonfinite + ")") +
              "; lower optimizer.lr or the schedule's peak, clip gradients (train.grad_clip_norm), or set "
              "train.on_nonfinite to rollback or skip. The last checkpoint is kept";
    } else if (!s.earlyStopReason.empty()) {
      status = "early-stopped";
    } else if (s.stopRequested) {
      status = "stopped";
      s.syncBatchNormStatistics();
      s.saveCheckpoints(false);
      log::info("stopped at step " + std::to_string(s.counters.step) + "; checkpoint saved, resume with: "
                "training-studio-cli resume " + s.runDir);
    }
    summary = s.finish(status, error);
    if (s.start.batchFind) {
      // batch-find's figures are copied by finish()
    } else if (s.start.lrFind) {
      summary.lrFindSuggestion = s.lrFindSuggestion;
      summary.lrFindMinimum = s.lrFindMinimum;
      summary.lrFindEnd = s.lrFindEnd;
    } else if (!s.stopRequested || !s.earlyStopReason.empty()) {
      const bool fresh = s.lastTestEval && s.lastTestEval->first == s.counters.step;
      EvalResult test = fresh ? s.lastTestEval->second : s.evaluateAndReport(false);
      summary.testAccuracy = test.accuracy;
      summary.testLoss = test.loss;
      if (s.ema && s.ema->started()) {
        const EvalResult avg = s.evaluateAverage(false);
        summary.emaTestAccuracy = avg.accuracy;
        summary.emaTestLoss = avg.loss;
        log::info("weight average (EMA): test accuracy " + fmt(avg.accuracy) + ", test loss " + fmt(avg.loss));
      }
      summary.evalSeconds = s.evalSeconds;
      log::info("finished: test accuracy " + fmt(test.accuracy) + ", test loss " + fmt(test.loss) + ", " +
                fmt(summary.samplesPerSecond) + " samples/s, " + fmt(summary.wallSeconds) + " s");
    }
  } catch (const LoadCancelled&) {
    status = "stopped";
    log::info("stopped while loading the data, before any training step");
  } catch (const c10::OutOfMemoryError& e) {
    status = "failed";
    const std::string limit = s.cpuMemory ? ", or raise memory.cpu_limit_mib" : "";
    if (s.busyWith == "setup") {
      error = "out of memory on " + describeDevice(s.device) + " while setting up, before any step (" +
              e.what_without_backtrace() + "): the model and its optimizer do not fit; use a smaller model" + limit;
      badInput = !limit.empty();
    } else if (s.busyWith == "evaluation") {
      error = "out of memory on " + describeDevice(s.device) + " evaluating after step " +
              std::to_string(s.counters.step) + " with evaluation.batch_size " +
              std::to_string(s.cfg.evaluation.batch_size) + " (" + e.what_without_backtrace() +
              "): lower evaluation.batch_size" + limit + "; the run's last checkpoint is kept";
    } else {
      error = "out of memory on " + describeDevice(s.device) + " at step " + std::to_string(s.counters.step + 1) +
              " with train.batch_size " + std::to_string(s.cfg.train.batch_size) +
              (s.counters.microSplit > 1 ? " (run in micro-batches of " + std::to_string(s.microBatch()) + ")" : "") +
              " (" + e.what_without_backtrace() +
              "): lower train.batch_size, raise train.accumulation_steps, use precision.mode bf16/fp16, turn on "
              "memory.activation_checkpointing" + limit +
              (s.cfg.memory.oom_backoff ? "" : ", or turn on memory.oom_backoff");
    }
  } catch (const RankLost& e) {
    status = "failed";
    error = std::string(e.what()) + "; the run's last checkpoint is kept: resume it with torchrun --nproc-per-node " +
            std::to_string(s.ranks ? s.ranks->world() : 1) + " --no-python training-studio-cli resume " + s.runDir;
  } catch (const InputError& e) {
    status = "failed";
    error = e.what();
    badInput = true;
  } catch (const std::invalid_argument& e) {
    status = "failed";
    error = e.what();
    badInput = true;
  } catch (const c10::Error& e) {
    status = "failed";
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    status = "failed";
    error = e.what();
  }
  if (status == "failed") {
    log::error("run failed: " + error);
    summary = s.finish(status, error);
    summary.badInput = badInput;
  }
  try {
    if (s.recorder) s.recorder->finish(summary);
    if (s.writer) RunRecorder::writeSummary(s.runDir, summary);
  } catch (const std::exception& e) {
    log::error(e.what());
    if (summary.error.empty()) {
      summary.status = "failed";
      summary.error = e.what();
    }
  }
  return summary;
}

}  // namespace studio
