#include "train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/version.h>

#include <chrono>
#include <optional>

#include "data/batch_loader.h"
#include "data/idx_file.h"
#include "models/model_factory.h"
#include "optim/grad_clip.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "train/autocast_scope.h"
#include "train/device_info.h"

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

// Per-step figures that stay on the device until the next flush.
struct PendingStep {
  int64_t step, epoch;
  double lr;
  int64_t samples;
};

}  // namespace

struct Trainer::State {
  TrainConfig cfg;
  std::string runDir;
  bool resume;
  StartOptions options;
  SessionChannel& ch;

  torch::Device device{torch::kCPU};
  DataSplits data;
  ImageSet valOnDevice, testOnDevice;
  LoaderOptions loaderOptions;
  std::unique_ptr<BatchLoader> loader;
  torch::nn::Sequential model{nullptr};
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LossScaler> scaler;
  std::unique_ptr<LrSchedule> schedule;
  std::unique_ptr<RunRecorder> recorder;
  std::shared_ptr<void> logSink;
  StepPlan plan;
  bool autocast = false;
  at::ScalarType autocastDtype = at::kFloat;

  // Position and running figures (all in the checkpoint).
  CheckpointCounters counters;
  torch::Tensor skipped;  // float32 scalar on the device: steps skipped on inf/NaN

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

  State(TrainConfig c, std::string dir, bool r, StartOptions o, SessionChannel& channel)
      : cfg(std::move(c)), runDir(std::move(dir)), resume(r), options(o), ch(channel) {}

  double wallSeconds() const {
    return wallAtStart + std::chrono::duration<double>(Clock::now() - started).count();
  }

  void setup() {
    device = resolveDevice(cfg.performance.device);
    applyPerformanceSwitches(cfg.performance, device);
    {
      std::lock_guard<std::mutex> lock(ch.textMutex);
      ch.device = describeDevice(device);
      ch.runDir = runDir;
    }
    logSink = log::addFileSink(runDir + "/log.txt");
    log::info((resume ? "resuming run " : "starting run ") + runDir + " on " + describeDevice(device) +
              " with LibTorch " + TORCH_VERSION);

    if (!resume) {
      // Settings first: a run that fails on its data still records what it was.
      recorder = std::make_unique<RunRecorder>(runDir, false, 0);
      recorder->writeSettings(cfg, {{"libtorch_version", TORCH_VERSION}, {"device", describeDevice(device)}});
    }
    torch::manual_seed(cfg.train.seed);
    data = loadDataSplits(cfg.data, cfg.train.seed);
    log::info("data: " + std::to_string(data.train.size()) + " training, " + std::to_string(data.val.size()) +
              " validation, " + std::to_string(data.test.size()) + " test images from " + cfg.data.root);

    const std::string& mode = cfg.precision.mode;
    autocast = mode != "fp32";
    autocastDtype = mode == "bf16" ? at::kBFloat16 : at::kHalf;
    if (mode == "fp16" && !device.is_cuda())
      log::warn("precision.mode fp16 on the CPU is slow and meant for testing; bf16 is the CPU's fast type");

    const auto& images = data.train.images;
    model = buildModel(cfg.model, images.size(1), images.size(2), images.size(3), data.numClasses);
    model->to(device);
    if (cfg.performance.channels_last) {
      torch::NoGradGuard noGrad;
      for (auto& p : model->parameters())
        if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
    }
    model->train();
    optimizer = std::make_unique<Optimizer>(model->parameters(), cfg.optimizer);
    scaler = std::make_unique<LossScaler>(cfg.precision.loss_scale, device, mode == "fp16");
    skipped = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));

    plan = planSteps(cfg, data.train.size());
    schedule = std::make_unique<LrSchedule>(cfg.schedule, cfg.optimizer.lr, plan.totalSteps);
    ch.totalSteps = plan.totalSteps;

    loaderOptions.batchSize = cfg.train.batch_size;
    loaderOptions.augmentFlip = cfg.data.augment_flip;
    loaderOptions.augmentCrop = cfg.data.augment_crop;
    loaderOptions.mean = cfg.data.normalize ? data.mean : 0.0;
    loaderOptions.std = cfg.data.normalize ? data.std : 1.0;
    loaderOptions.seed = cfg.train.seed;
    loaderOptions.deviceResident = cfg.loader.mode != "workers";
    loaderOptions.workers = cfg.loader.workers;
    loaderOptions.prefetch = cfg.loader.prefetch;
    loaderOptions.pinMemory = cfg.loader.pin_memory;
    loaderOptions.channelsLast = cfg.performance.channels_last;
    loader = std::make_unique<BatchLoader>(data.train, loaderOptions, device);
    if (data.val.size() > 0) valOnDevice = {data.val.images.to(device), data.val.labels.to(device)};
    testOnDevice = {data.test.images.to(device), data.test.labels.to(device)};

    if (resume) {
      CheckpointParts parts{model, *optimizer, *scaler, skipped, counters};
      loadCheckpoint(runDir + "/checkpoints/last.ckpt", parts, device);
      log::info("resumed at step " + std::to_string(counters.step) + " (epoch " +
                std::to_string(counters.epoch) + ", batch " + std::to_string(counters.batchInEpoch) + ")");
    }
    wallAtStart = counters.wallSeconds;
    if (resume) recorder = std::make_unique<RunRecorder>(runDir, true, counters.step);
    else writeSettings();
    ch.step = counters.step;
    ch.epoch = counters.epoch;
    log::info("plan: " + std::to_string(plan.totalSteps) + " optimizer steps, " +
              std::to_string(plan.stepsPerEpoch) + " per epoch, batch " + std::to_string(cfg.train.batch_size) +
              " x " + std::to_string(cfg.train.accumulation_steps) + " accumulated, " + mode +
              (loaderOptions.deviceResident ? ", data resident on the device"
                                            : ", " + std::to_string(cfg.loader.workers) + " loader workers"));
  }

  void writeSettings() {
    nlohmann::json info = {{"libtorch_version", TORCH_VERSION},
                           {"device", describeDevice(device)},
                           {"train_examples", data.train.size()},
                           {"total_steps", plan.totalSteps},
                           {"normalization", {{"mean", loaderOptions.mean}, {"std", loaderOptions.std}}},
                           {"lr_changes", counters.lrChanges}};
    recorder->writeSettings(cfg, info);
  }

  CheckpointParts parts() { return CheckpointParts{model, *optimizer, *scaler, skipped, counters}; }

  void saveCheckpoints(bool best) {
    counters.wallSeconds = wallSeconds();
    const std::string dir = runDir + "/checkpoints";
    std::vector<std::string> paths{dir + "/last.ckpt"};
    if (best) paths.push_back(dir + "/best.ckpt");
    saveCheckpoint(paths, parts());
    recorder->flush();
  }

  EvalResult evaluate(const ImageSet& set) {
    EvalResult r;
    if (set.size() == 0) return r;
    torch::InferenceMode inference;
    model->eval();
    auto f32 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
    torch::Tensor lossSum = torch::zeros({}, f32), correct = torch::zeros({}, f32);
    const int64_t bs = cfg.evaluation.batch_size;
    for (int64_t start = 0; start < set.size(); start += bs) {
      const int64_t end = std::min(start + bs, set.size());
      torch::Tensor x = transformBatch(set.images.slice(0, start, end), loaderOptions, 0, false);
      if (cfg.performance.channels_last) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      torch::Tensor y = set.labels.slice(0, start, end);
      torch::Tensor logits;
      {
        AutocastScope ac(device.type(), autocast, autocastDtype);
        logits = model->forward(x);
      }
      logits = logits.to(torch::kFloat32);
      lossSum += torch::nn::functional::cross_entropy(
          logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
      correct += logits.argmax(1).eq(y).sum();
    }
    model->train();
    torch::Tensor both = torch::stack({lossSum, correct}).cpu();  // the one sync of an evaluation
    r.loss = both[0].item<double>() / static_cast<double>(set.size());
    r.accuracy = both[1].item<double>() / static_cast<double>(set.size());
    return r;
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
      r.samplesPerSecond = sps;
      r.stepMillis = 1000.0 * seconds / static_cast<double>(pending.size());
      r.memAllocatedMiB = mem.allocatedMiB;
      r.memReservedMiB = mem.reservedMiB;
      r.memPeakMiB = mem.peakMiB;
      post(r);
      lastTrainLoss = r.trainLoss;
    }
    ch.samplesPerSecond = sps;
    ch.wallSeconds = wallSeconds();
    ch.lastLoss = lastTrainLoss;
    pending.clear();
    pendingStats.clear();
    recorder->flushIfDue();
    windowStart = Clock::now();
  }

  void post(const MetricRecord& r) {
    recorder->append(r);
    ch.post(r);
  }

  void evalAndCheckpoint() {
    flushStats();
    const bool haveVal = valOnDevice.size() > 0;
    EvalResult e = evaluate(haveVal ? valOnDevice : testOnDevice);
    if (!haveVal) lastTestEval = {counters.step, e};
    MetricRecord r;
    r.kind = RecordKind::Eval;
    r.step = counters.step;
    r.epoch = counters.epoch;
    r.wallSeconds = wallSeconds();
    r.evalLoss = e.loss;
    r.evalAccuracy = e.accuracy;
    post(r);
    lastEvalLoss = e.loss;
    const bool best = cfg.output.save_best && !(e.accuracy <= counters.bestAccuracy);
    if (best) counters.bestAccuracy = e.accuracy;
    log::info("step " + std::to_string(counters.step) + " " + (haveVal ? "validation" : "test") + " loss " +
              fmt(e.loss) + " accuracy " + fmt(e.accuracy));
    saveCheckpoints(best);
    windowStart = Clock::now();  // evaluation time is not training time
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
              recorder->flush();
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

  void optimizerStep(const torch::Tensor& meanLoss, int64_t samples) {
    std::vector<torch::Tensor> grads = optimizer->grads();
    scaler->unscale(grads);
    torch::Tensor norm = clipGradNorm(grads, cfg.train.grad_clip_norm);
    const double lr = schedule->lr(counters.step) * counters.lrMultiplier;
    std::optional<torch::Tensor> foundInf;
    if (scaler->enabled()) foundInf = scaler->foundInf();
    optimizer->step(lr, schedule->momentum(counters.step), foundInf);
    if (scaler->enabled()) {
      skipped.add_(scaler->foundInf());
      scaler->update();
    }
    optimizer->zeroGrad(cfg.performance.zero_grad_to_none);
    pendingStats.push_back(torch::stack({meanLoss.to(torch::kFloat32), norm.to(device), scaler->scaleTensor(), skipped}));
    pending.push_back({counters.step + 1, counters.epoch, lr, samples});
  }

  void trainLoop() {
    const int64_t k = cfg.train.accumulation_steps;
    const int64_t b = cfg.train.batch_size;
    const int64_t n = data.train.size();
    const int64_t nb = loader->batchesPerEpoch();
    const int64_t stopAt = options.stopAtStep > 0 ? options.stopAtStep : plan.totalSteps;
    windowStart = Clock::now();
    ch.state = SessionState::Running;
    pollCommands();
    while (counters.step < plan.totalSteps && !stopRequested) {
      loader->startEpoch(counters.epoch, counters.batchInEpoch);
      while (counters.batchInEpoch < nb && counters.step < plan.totalSteps && !stopRequested) {
        const int64_t groupEnd = std::min(counters.batchInEpoch + k, nb);
        const int64_t groupSamples = std::min(groupEnd * b, n) - counters.batchInEpoch * b;
        torch::Tensor lossSum;
        for (int64_t i = counters.batchInEpoch; i < groupEnd; ++i) {
          Batch batch;
          if (!loader->next(batch)) throw std::logic_error("loader ended before its epoch");
          torch::Tensor logits;
          {
            AutocastScope ac(device.type(), autocast, autocastDtype);
            logits = model->forward(batch.x);
          }
          torch::Tensor loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), batch.y);
          // Each micro-batch weighs by its share of the group's samples, so
          // the accumulated gradient is the mean over the whole group, also
          // for a short last group.
          const double share = static_cast<double>(batch.size()) / static_cast<double>(groupSamples);
          scaler->scale(loss * share).backward();
          torch::Tensor contribution = loss.detach() * share;
          lossSum = lossSum.defined() ? lossSum + contribution : contribution;
        }
        counters.batchInEpoch = groupEnd;
        optimizerStep(lossSum, groupSamples);
        ++counters.step;
        ch.step = counters.step;

        if (pending.size() >= static_cast<size_t>(cfg.train.log_every_steps)) flushStats();
        const bool epochDone = counters.batchInEpoch >= nb;
        if (epochDone) {
          ++counters.epoch;
          counters.batchInEpoch = 0;
          ch.epoch = counters.epoch;
        }
        const int64_t every = cfg.evaluation.every_steps;
        const bool evalDue = every > 0 ? counters.step % every == 0 : epochDone;
        if (evalDue || counters.step == plan.totalSteps) {
          evalAndCheckpoint();
        } else if (cfg.output.checkpoint_every_steps > 0 && counters.step % cfg.output.checkpoint_every_steps == 0) {
          flushStats();
          saveCheckpoints(false);
        }
        if (counters.step >= stopAt && counters.step < plan.totalSteps) stopRequested = true;
        pollCommands();
        if (epochDone) break;
      }
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
    s.totalSteps = plan.totalSteps;
    s.epochs = counters.epoch;
    s.bestEvalAccuracy = counters.bestAccuracy < 0 ? MetricRecord::kNone : counters.bestAccuracy;
    s.finalTrainLoss = lastTrainLoss;
    s.finalEvalLoss = lastEvalLoss;
    s.samplesPerSecond = trainSeconds > 0 ? static_cast<double>(trainSamples) / trainSeconds : MetricRecord::kNone;
    s.wallSeconds = wallSeconds();
    try {
      if (skipped.defined()) s.skippedSteps = static_cast<int64_t>(skipped.item<float>());
    } catch (const std::exception&) {
      // A broken device cannot report it; the error says why.
    }
    return s;
  }
};

Trainer::Trainer(TrainConfig config, std::string runDir, bool resume, StartOptions options, SessionChannel& channel)
    : m_s(std::make_unique<State>(std::move(config), std::move(runDir), resume, options, channel)) {}

Trainer::~Trainer() = default;

RunSummary Trainer::run() {
  State& s = *m_s;
  s.started = Clock::now();
  std::string status = "completed", error;
  bool badInput = false;
  RunSummary summary;
  try {
    s.setup();
    s.trainLoop();
    if (s.stopRequested) {
      status = "stopped";
      s.saveCheckpoints(false);
      log::info("stopped at step " + std::to_string(s.counters.step) + "; checkpoint saved, resume with: "
                "training-studio-cli resume " + s.runDir);
    }
    summary = s.finish(status, error);
    if (!s.stopRequested) {
      const bool fresh = s.lastTestEval && s.lastTestEval->first == s.counters.step;
      EvalResult test = fresh ? s.lastTestEval->second : s.evaluate(s.testOnDevice);
      summary.testAccuracy = test.accuracy;
      summary.testLoss = test.loss;
      log::info("finished: test accuracy " + fmt(test.accuracy) + ", test loss " + fmt(test.loss) + ", " +
                fmt(summary.samplesPerSecond) + " samples/s, " + fmt(summary.wallSeconds) + " s");
    }
  } catch (const c10::OutOfMemoryError& e) {
    status = "failed";
    error = "out of memory on " + describeDevice(s.device) + " at step " + std::to_string(s.counters.step) +
            " with train.batch_size " + std::to_string(s.cfg.train.batch_size) +
            ": lower train.batch_size, raise train.accumulation_steps or use precision.mode bf16/fp16";
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
    if (s.recorder) s.recorder->flush();
    RunRecorder::writeSummary(s.runDir, summary);
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
