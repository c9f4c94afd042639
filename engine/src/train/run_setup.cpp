#include "train/run_setup.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include <cstdio>
#include <random>
#include <thread>
#include <tuple>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "dist/grad_reducer.h"
#include "dist/process_group.h"
#include "models/model.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/run_recorder.h"
#include "studio/csv_table.h"
#include "studio/devices.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/cpu_memory.h"
#include "train/device_info.h"
#include "train/evaluation.h"
#include "train/metric_window.h"
#include "train/run_origin.h"
#include "train/step/step_runner.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

// The device, and under torchrun this process's GPU and share of the cores.
void place(RunContext& ctx) {
  RunContext::Placement& w = ctx.where;
  w.ranks = currentProcessGroup();
  w.writer = !w.ranks || w.ranks->leader();
  w.device = resolveDevice(ctx.cfg.performance.device);
  PerformanceConfig performance = ctx.cfg.performance;
  if (ProcessGroup* ranks = w.ranks) {
    // One GPU per process: LOCAL_RANK's, unless the settings name one.
    if (w.device.is_cuda() && ctx.cfg.performance.device.find(':') == std::string::npos) {
      if (ranks->localRank() >= static_cast<int>(torch::cuda::device_count()))
        throw InputError(ranks->describe() + " has LOCAL_RANK " + std::to_string(ranks->localRank()) + " but only " +
                         std::to_string(torch::cuda::device_count()) +
                         " CUDA device(s) exist here: start at most that many processes per machine "
                         "(torchrun --nproc-per-node)");
      w.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(ranks->localRank()));
    }
    // The machine's cores shared between its processes.
    if (performance.threads == 0)
      performance.threads = static_cast<int>(
          std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(ranks->localWorld())));
    ranks->useDevice(w.device);
  }
  applyPerformanceSwitches(performance, w.device);
}

// "1.25 0.5 2", for the log.
std::string numbers(const std::vector<double>& v) {
  std::string list;
  for (double x : v) list += (list.empty() ? "" : " ") + fmt(x, 4);
  return list;
}

void logData(const RunContext& ctx) {
  const DataSplits& data = ctx.data.splits;
  const DataPlan& plan = ctx.data.plan;
  auto join = [](const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
    return s;
  };
  log::info("data (" + plan.format + "): " + std::to_string(data.train->size()) + " training, " +
            std::to_string(data.val->size()) + " validation, " + std::to_string(data.test->size()) +
            (data.task == TaskKind::segmentation ? " test images of up to " : " test examples of ") +
            data.input.text() + ", " +
            (data.regression()   ? std::to_string(data.targetNames.size()) + " regression target(s)"
             : data.multilabel() ? std::to_string(data.targetNames.size()) + " labels"
                                 : std::to_string(data.numClasses()) + " classes"));
  if (data.stored.larger(data.input))
    log::info("images stored at " + std::to_string(data.stored.height) + "x" + std::to_string(data.stored.width) +
              " (data.stored_size: each resized to cover it, its aspect kept, and centre-cropped); the input is cut "
              "from them: the centre for evaluation and prediction, " +
              (ctx.cfg.data.augment_resized_crop ? "a random resized crop" : "the centre") + " for training");
  if (const std::string small = storedAbovePhotos(data.stored, data.input, plan.files); !small.empty())
    log::warn(small);
  if (data.multilabel()) {
    std::string labels;
    for (size_t k = 0; k < data.targetNames.size(); ++k)
      labels += std::string(k ? ", " : "") + data.targetNames[k] + " " + std::to_string(data.labelPositives[k]);
    log::info("training examples per label: " + labels);
    if (!data.lossWeights.empty())
      log::info("positive weights (loss.pos_weight " + ctx.cfg.loss.pos_weight + "): " + numbers(data.lossWeights));
  } else if (data.regression()) {
    const bool standardized = ctx.cfg.task.standardize_targets;
    std::string targets;
    for (size_t t = 0; t < data.targetNames.size(); ++t)
      targets += std::string(t ? "; " : "") + data.targetNames[t] +
                 (standardized ? " mean " + fmt(data.targetMean[t]) + " std " + fmt(data.targetStd[t]) : "");
    log::info(std::string(standardized ? "targets, standardised with the training split's mean and std: "
                                       : "targets (not standardised): ") +
              targets);
  } else if (data.task == TaskKind::segmentation) {
    log::info("pixels per class (" + std::to_string(data.numClasses()) + " classes; data.ignore_index " +
              std::to_string(ctx.cfg.data.ignore_index) + " left out): training " + join(data.trainCounts) + "; test " +
              join(data.testCounts));
  } else {
    log::info("examples per class (" + std::to_string(data.numClasses()) + " classes): training " +
              join(data.trainCounts) + "; test " + join(data.testCounts));
    if (!data.lossWeights.empty())
      log::info("class weights (loss.class_weights " + ctx.cfg.loss.class_weights + "): " + numbers(data.lossWeights));
    if (ctx.cfg.data.sampler == SamplerKind::balanced)
      log::info("balanced sampler: each epoch draws " + std::to_string(data.train->size()) +
                " training examples with replacement, every class equally often");
  }
  log::info("training from " + plan.trainFrom + "; testing on " + plan.testFrom +
            (plan.valFrom.empty() ? std::string() : "; validating on " + plan.valFrom));
  if (plan.format == DataFormat::image_folder)
    log::info(std::string(data.fromCache ? "decoded images read from the cache " : "images decoded in ") +
              (data.fromCache ? data.cacheFile
                              : fmt(data.decodeSeconds, 3) + " s" +
                                    (data.cacheFile.empty() ? "" : ", cached in " + data.cacheFile)));
  if (!data.skipped.empty()) {
    std::string list;
    for (size_t i = 0; i < data.skipped.size() && i < 10; ++i) list += "\n  " + data.skipped[i];
    log::warn("skipped " + std::to_string(data.skipped.size()) +
              " image(s) that could not be read (data.on_bad_file skip); the first ones:" + list);
  }
  if (plan.otherFiles > 0)
    log::info(std::to_string(plan.otherFiles) + " file(s) under " + ctx.cfg.data.root +
              " are not images and were left out");
  if (!ctx.cfg.data.corrections.empty())
    log::info("corrections from " + ctx.cfg.data.corrections + ": " + std::to_string(plan.correctionsRemoved) +
              " file(s) removed, " + std::to_string(plan.correctionsRelabelled) + " relabelled");
}

void writeClasses(const RunContext& ctx) {
  const DataSplits& data = ctx.data.splits;
  nlohmann::json j = {
      {"classes", data.classNames},
      {"counts", {{"train", data.trainCounts}, {"validation", data.valCounts}, {"test", data.testCounts}}}};
  if (!data.skipped.empty()) j["skipped_files"] = data.skipped;
  writeFileAtomically(ctx.runDir + "/" + run_files::kClasses, j.dump(1) + "\n");
}

// splits.csv: the examples of the validation and test splits, each as
// exampleSource names it (a file, a table's row, an idx file's image), with a
// detector's image id (the annotations' own; YOLO's and VOC's, the image's
// place), so that the figures can be computed again outside the studio
// (pycocotools with params.imgIds, say). The training split is the rest.
void writeSplits(const RunContext& ctx) {
  const DataPlan& p = ctx.data.plan;
  std::string text = p.detection() ? "split,image_id,source\n" : "split,source\n";
  for (const auto& [name, split] : {std::pair{"validation", &p.val}, std::pair{"test", &p.test}})
    for (const int64_t item : split->items) {
      text += std::string(name) + ",";
      if (p.detection()) text += std::to_string(p.boxes.images.at(static_cast<size_t>(item)).id) + ",";
      text += csvField(exampleSource(p, item)) + "\n";
    }
  writeFileAtomically(ctx.runDir + "/" + run_files::kSplits, text);
}

// data.sampler balanced: each training example weighs 1 / its class's count.
torch::Tensor balancedSampleWeights(const DataSplits& data) {
  const torch::Tensor labels = data.train->all().y;
  std::vector<double> perClass;
  for (int64_t n : data.trainCounts) perClass.push_back(n > 0 ? 1.0 / static_cast<double>(n) : 0.0);
  return torch::tensor(perClass, torch::kFloat64).index_select(0, labels.cpu());
}

// loader.mode auto: the data stays on the device when the training split
// takes at most half of what is free there (on the CPU: of the memory).
bool residentOnDevice(const RunContext& ctx) {
  if (ctx.cfg.loader.mode != LoaderMode::auto_) return ctx.cfg.loader.mode == LoaderMode::device;
  const DataSplits& data = ctx.data.splits;
  const int64_t bytes = data.train->bytes() + data.val->bytes() + data.test->bytes();
  return static_cast<double>(bytes) <= 0.5 * static_cast<double>(freeMemoryBytes(ctx.where.device));
}

// memory.cpu_limit_mib (batch-find on the CPU measures against half of the
// free memory unless it is set).
void limitCpuMemory(RunContext& ctx) {
  const torch::Device device = ctx.where.device;
  int64_t limitMiB = ctx.cfg.memory.cpu_limit_mib;
  if (ctx.start.is<run_start::BatchFind>() && limitMiB == 0 && !device.is_cuda()) {
    // Past the machine's memory the kernel kills the process; a limit
    // turns that into an error the search can catch.
    limitMiB = std::max<int64_t>(1, (freeMemoryBytes(device) / 2) >> 20);
    log::info("batch-find on the CPU: measured against half of the free memory, " + std::to_string(limitMiB) +
              " MiB (set memory.cpu_limit_mib to choose)");
  }
  if (limitMiB <= 0) return;
  if (device.is_cuda()) {
    log::warn("memory.cpu_limit_mib applies on the CPU; this run is on " + describeDevice(device) +
              " and uses the GPU's memory as it is");
    return;
  }
  try {
    ctx.where.cpuMemory = std::make_unique<CpuMemoryMeter>(limitMiB << 20);
  } catch (const std::logic_error&) {
    throw InputError(
        "memory.cpu_limit_mib: another run in this process already has a CPU memory limit; "
        "start this one when it has ended, or set the limit to 0");
  }
  log::info("CPU tensor memory limited to " + std::to_string(limitMiB) +
            " MiB (memory.cpu_limit_mib), counted from after the data was loaded");
}

void checkSameModelFile(const RunContext& ctx, const nlohmann::json& info) {
  if (!info.contains(run_files::run_info::kModelSha256)) return;
  const std::string was = info.at(run_files::run_info::kModelSha256).get<std::string>();
  const std::string& now = ctx.parts.modelSha256;
  if (was != now)
    throw ModelError("model.path " + ctx.cfg.model.path + " changed since this run started (SHA-256 " +
                     was.substr(0, 16) + "… then, " + now.substr(0, 16) +
                     "… now): put the original file back, or start a new run");
}

// model.weights into the model as its kind takes them (a fresh run, a fork
// before its parent's weights replace them, a probe), recorded for run_info.json.
void loadStartingWeights(RunContext& ctx, Model& model) {
  const ModelConfig& m = ctx.cfg.model;
  ctx.setPhase("reading " + m.weights);
  nlohmann::json record;
  std::string said;
  try {
    said = model.loadStartingWeights(m.weights, m.keep_head, record);
  } catch (const std::exception&) {
    ctx.weightsRefused = true;
    throw;
  }
  if (said.empty()) return;
  ctx.parts.pretrained = std::move(record);
  log::info("pretrained weights " + m.weights + ": " + said);
}

// The model on the device as the settings shape it, the same on every rank.
void buildModel(RunContext& ctx, const nlohmann::json& stored) {
  const DataSplits& data = ctx.data.splits;
  const torch::Device device = ctx.where.device;
  const TrainConfig& cfg = ctx.cfg;
  TaskData taskData;
  taskData.weights = data.lossWeights;
  taskData.device = device;
  if (boxesTask(data.task)) taskData.boxes = std::make_shared<const BoxAnnotations>(ctx.data.plan.boxes);
  if (data.task == TaskKind::segmentation) {
    taskData.classes = data.numClasses();
    taskData.mean = data.mean;
    taskData.std = data.std;
  }
  ctx.parts.task = makeTask(cfg, taskData);
  auto& model = ctx.parts.model;
  model = makeModel(cfg.model, data.input, data.outputs());
  if (std::string sha = model->fileSha256(); !sha.empty()) {
    ctx.parts.modelSha256 = std::move(sha);
    if (resumes(ctx.start)) checkSameModelFile(ctx, stored);
    // The optimizer's first step would fail on "element 0 of tensors does not
    // require grad": say why instead.
    if (model->parameters().empty())
      throw ModelError("model.path " + cfg.model.path +
                       " has no trainable parameters (none at all, or every one with requires_grad False): the model "
                       "has nothing to train; give a model with learnable layers");
  }
  // A resume loads its checkpoint's weights over these; one killed before its
  // first checkpoint trains again from step 0, from the pretrained weights.
  const auto* again = ctx.start.as<run_start::Resume>();
  const bool loadsCheckpoint = resumes(ctx.start) && !(again && again->fromStart);
  if (!cfg.model.weights.empty() && !loadsCheckpoint) loadStartingWeights(ctx, *model);
  model->to(device);
  {
    CudnnHeuristicsOnly heuristics;  // a probe's shape, never trained on
    checkModelOutput(*model, cfg.model, data.input, data.outputs(), device);
  }
  if (cfg.performance.channels_last) model->toChannelsLast();
  if (cfg.memory.activation_checkpointing != ActivationCheckpointing::off) {
    const int64_t every =
        cfg.memory.activation_checkpointing == ActivationCheckpointing::every ? cfg.memory.checkpoint_blocks : 0;
    log::info("activation checkpointing (" + cfg.memory.activation_checkpointing +
              "): " + model->checkpointActivations(every));
  }
  model->setTraining(true);
  if (ctx.where.ranks) {
    // The same initial weights on every rank: rank 0's.
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> state = model->parameters();
    for (const auto& b : model->buffers()) state.push_back(b);
    ctx.where.ranks->broadcast(state, "the initial weights' broadcast");
  }
}

// A torchvision backbone's last stage sees the input at 1/32: at 32 px and
// below a single value per channel, which BatchNorm refuses to normalise in
// training ("Expected more than 1 value per channel"). An epoch's last batch
// that gives a process one example would stop the run after its first
// epoch: refuse it before training, naming what to change.
void refuseBatchOfOne(const RunContext& ctx) {
  const TrainConfig& cfg = ctx.cfg;
  const InputShape& in = ctx.data.splits.input;
  if (!isTorchvisionBackbone(cfg.model.kind) || in.height > 32 || in.width > 32) return;
  const int64_t n = ctx.data.splits.train->size(), processes = ctx.world();
  const int64_t global = cfg.train.batch_size * processes;
  const int64_t last = n - (n - 1) / global * global;  // the last global batch's examples
  bool single = false;
  for (int64_t r = 0; r < processes; ++r) single = single || (last > r && (last - r + processes - 1) / processes == 1);
  if (!single || cfg.train.batch_size == 1) return;
  throw InputError("train.batch_size " + std::to_string(cfg.train.batch_size) + ": the " + std::to_string(n) +
                   " training examples leave each epoch's last batch with a single example" +
                   (processes > 1 ? " on a process" : "") + ", which " + cfg.model.kind +
                   "'s BatchNorm cannot normalise in training at " + in.text() +
                   " (one value per channel after its 1/32 downsampling): choose another train.batch_size (" +
                   std::to_string(cfg.train.batch_size + 1) + " or " + std::to_string(cfg.train.batch_size - 1) +
                   "), or a data.image_size above 32");
}

void startLoader(RunContext& ctx) {
  const TrainConfig& cfg = ctx.cfg;
  const DataSplits& data = ctx.data.splits;
  const torch::Device device = ctx.where.device;
  if (data.kind == DataKind::Image) refuseBatchOfOne(ctx);
  LoaderOptions& o = ctx.data.loaderOptions;
  // A detector's augmentations move its boxes, a segmenter's its masks: the
  // task applies them (train/tasks/detection.cpp, segmentation.cpp), not the loader.
  const bool image = data.kind == DataKind::Image && !annotatedTask(data.task);
  o.batchSize = cfg.train.batch_size;
  o.augmentFlip = image && cfg.data.augment_flip;
  o.augmentCrop = image ? cfg.data.augment_crop : 0;
  if (image) o.photo = photoAugment(cfg.data);
  if (image) o.policy = autoAugment(cfg.data);
  if (data.task == TaskKind::classification) o.mix = batchMix(cfg.data, data.numClasses());
  o.norm = Normalization::make(data.kind == DataKind::Image, data.mean, data.std, device);
  if (image && data.stored.larger(data.input))
    std::tie(o.cropHeight, o.cropWidth) = std::pair(data.input.height, data.input.width);
  o.seed = cfg.train.seed;
  o.deviceResident = residentOnDevice(ctx);
  o.workers = cfg.loader.workers;
  o.prefetch = cfg.loader.prefetch;
  o.pinMemory = cfg.loader.pin_memory;
  o.channelsLast = cfg.performance.channels_last;
  // A segmenter's pool rows hold the mask beside the image (data/mask_data.h).
  o.keepBytes = data.task == TaskKind::segmentation;
  if (ctx.where.ranks) {
    o.shardRank = ctx.where.ranks->rank();
    o.shardCount = ctx.where.ranks->world();
  }
  if (cfg.data.sampler == SamplerKind::balanced && data.task == TaskKind::classification)
    o.sampleWeights = balancedSampleWeights(data);
  ctx.setPhase(o.deviceResident ? "moving the data to " + describeDevice(device) : "starting the loader");
  ctx.data.loader = std::make_unique<BatchLoader>(data.train, o, device);
  ctx.data.val = o.deviceResident ? onDevice(data.val, device) : data.val;
  ctx.data.test = o.deviceResident ? onDevice(data.test, device) : data.test;
}

// Under torchrun: synchronised BatchNorm and the gradient reducer.
void joinRanks(RunContext& ctx) {
  ProcessGroup* ranks = ctx.where.ranks;
  if (!ranks) return;
  const TrainConfig& cfg = ctx.cfg;
  if (cfg.distributed.batchnorm == BatchNormSync::sync) {
    const int layers = ctx.parts.model->synchroniseBatchNorm(ranks);
    if (layers < 0) throw InputError("distributed.batchnorm sync works on the built-in models only; set it to local");
    ctx.where.syncedBatchNorm = layers > 0;
    log::info("distributed.batchnorm sync: " + std::to_string(layers) +
              " BatchNorm layer(s) normalise with the whole global batch's statistics");
  }
  ctx.where.reducer = std::make_unique<GradReducer>(ctx.parts.model->parameters(), *ranks,
                                                    static_cast<int64_t>(cfg.distributed.bucket_mib) << 20);
  log::info(ranks->describe() + ": batch " + std::to_string(cfg.train.batch_size) + " per process, " +
            std::to_string(cfg.train.batch_size * ranks->world()) + " in all; gradients summed in " +
            std::to_string(ctx.where.reducer->buckets()) + " bucket(s) of up to " +
            std::to_string(cfg.distributed.bucket_mib) + " MiB (" + ranks->backendName() + ")");
}

// 64 random bits as 16 hex digits: which run a checkpoint belongs to.
std::string newRunId() {
  std::random_device random;
  const uint64_t bits = (static_cast<uint64_t>(random()) << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

std::string storedRunId(const nlohmann::json& stored) {
  const auto it = stored.find(run_files::run_info::kRunId);
  return it != stored.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void setupRun(RunContext& ctx) {
  const TrainConfig& cfg = ctx.cfg;
  const bool resume = resumes(ctx.start);
  const auto* more = ctx.start.as<run_start::Continue>();
  // The services and callbacks first: a run that fails while setting up
  // still reports their figures (its early-stopping metric, say).
  ctx.window = std::make_unique<MetricWindow>(ctx);
  ctx.evaluation = std::make_unique<Evaluation>(ctx);
  ctx.checkpoints = std::make_unique<Checkpoints>(ctx);
  ctx.callbacks = makeCallbacks(ctx);
  place(ctx);
  const torch::Device device = ctx.where.device;
  DeviceWarmup warmup(device);  // the GPU starts up while the data loads
  {
    std::lock_guard<std::mutex> lock(ctx.ch.textMutex);
    ctx.ch.device = describeDevice(device);
    ctx.ch.runDir = ctx.runDir;
  }
  if (ctx.where.writer) ctx.logSink = log::addFileSink(ctx.runDir + "/" + run_files::kLog);
  log::info((more     ? "continuing run "
             : resume ? "resuming run "
                      : "starting run ") +
            ctx.runDir + " on " + describeDevice(device) + " with LibTorch " + TORCH_VERSION);
  for (const ConfigError& w : warningsOnThisMachine(cfg)) log::warn(w.text());
  // A resumed run's run_info (an empty object when there is none).
  const nlohmann::json stored = resume ? storedRunInfo(ctx.runDir) : nlohmann::json::object();
  ctx.lineage.runId = resume ? storedRunId(stored) : newRunId();

  if (!resume && ctx.where.writer) {
    // Settings first: a run that fails on its data still records what it was.
    ctx.recorder = std::make_unique<RunRecorder>(ctx.runDir, false, 0);
    nlohmann::json info = {{run_files::run_info::kLibtorch, TORCH_VERSION},
                           {run_files::run_info::kDevice, describeDevice(device)},
                           {run_files::run_info::kRunId, ctx.lineage.runId}};
    if (probes(ctx.start))  // the window lists it as a probe, not a training run
      info[run_files::run_info::kProbe] = probeKind(ctx.start);
    ctx.recorder->writeSettings(cfg, info);
  }
  torch::manual_seed(cfg.train.seed);
  ctx.setPhase("reading the data");
  ctx.data.plan = planData(cfg);
  LoadProgress progress;
  progress.report = [&ctx](const std::string& phase, int64_t done, int64_t total) { ctx.setPhase(phase, done, total); };
  progress.cancelled = [&ctx] { return ctx.ch.stopAsked.load(); };
  ctx.data.splits = loadData(cfg, ctx.data.plan, progress);
  logData(ctx);

  const auto& mode = cfg.precision.mode;
  ctx.where.autocast = mode != PrecisionMode::fp32;
  ctx.where.autocastDtype = mode == PrecisionMode::bf16 ? at::kBFloat16 : at::kHalf;

  warmup.wait();
  ctx.setPhase("building the model");
  limitCpuMemory(ctx);
  buildModel(ctx, stored);
  ctx.parts.optimizer = std::make_unique<Optimizer>(ctx.parts.model->parameters(), cfg.optimizer);
  ctx.parts.scaler = std::make_unique<LossScaler>(cfg.precision.loss_scale, device, mode == PrecisionMode::fp16);
  ctx.skipped = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  ctx.nonfinite = torch::zeros_like(ctx.skipped);

  ctx.steps = planSteps(ctx.globalBatchConfig(), ctx.data.splits.train->size());
  startLoader(ctx);
  if (ctx.where.writer) {
    writeClasses(ctx);
    writeSplits(ctx);
  }

  const auto* again = ctx.start.as<run_start::Resume>();
  const bool fromStart = again && again->fromStart;
  if (fromStart)
    log::warn("no checkpoint yet (the run ended before its first): training again from step 0 in " + ctx.runDir +
              "; the rows it recorded are replaced as it makes them again");
  else if (resume)
    resumeRun(ctx, stored);
  else if (const auto* fork = ctx.start.as<run_start::Fork>())
    startFork(ctx, *fork);
  planSchedule(ctx);
  if (more) continueRun(ctx, *more);
  ctx.callbacks->onTrainStart(ctx);
  ctx.ch.totalSteps = ctx.steps.totalSteps;
  ctx.times.wallAtStart = ctx.position.wallSeconds;
  ctx.position.worldSize = ctx.world();
  if (resume && ctx.where.writer) {
    ctx.recorder = std::make_unique<RunRecorder>(ctx.runDir, true, ctx.position.step);
    // The figures its rows kept: a run that trains no further step (killed
    // after its last checkpoint, before summary.json) ends on them.
    if (const auto& t = ctx.recorder->lastTrainRow()) {
      ctx.lastTrainLoss = t->trainLoss;
      ctx.recordedSamplesPerSecond = t->samplesPerSecond;
    }
    if (const auto& e = ctx.recorder->lastEvalRow()) ctx.lastEvalLoss = e->evalLoss;
  }
  if (!resume || more || fromStart) writeRunSettings(ctx);
  ctx.showPosition();
  ctx.stepper = makeStepRunner(ctx);
  joinRanks(ctx);
  ctx.setPhase("");
  log::info("plan: " + std::to_string(ctx.steps.totalSteps) + " optimizer steps, " +
            std::to_string(ctx.steps.stepsPerEpoch) + " per epoch, batch " + std::to_string(cfg.train.batch_size) +
            " x " + std::to_string(cfg.train.accumulation_steps) + " accumulated, " + mode + ", model " +
            ctx.parts.model->description() + " (" + std::to_string(ctx.parts.model->parameterCount()) + " parameters)" +
            (ctx.data.loaderOptions.deviceResident ? ", data resident on the device"
                                                   : ", " + std::to_string(cfg.loader.workers) + " loader workers"));
}

}  // namespace studio
