#include "train/run_origin.h"

#include "data/batch_loader.h"
#include "data/dataset.h"
#include "dist/process_group.h"
#include "models/model.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/device_info.h"

#include <torch/version.h>

namespace studio {
namespace {

// The loaded checkpoint's position must lie inside an epoch of this
// loader ("that <epochHas> N batches<advice>" says why it does not).
void requirePositionFits(const RunContext& ctx, const std::string& path, const std::string& epochHas,
                         const std::string& advice) {
  const int64_t batches = ctx.data.loader->batchesPerEpoch();
  if (ctx.position.batchInEpoch < batches) return;
  throw CheckpointError("checkpoint " + path + " stopped at batch " + std::to_string(ctx.position.batchInEpoch) +
                        " of an epoch that " + epochHas + " " + std::to_string(batches) + " batches" + advice);
}

nlohmann::json extensionJson(const ScheduleExtension& e) {
  nlohmann::json j = {{"from_step", e.from}, {"to_step", e.to}, {"schedule", e.how}, {"lr", e.lr}};
  if (e.how == ContinueSchedule::restart) {
    TrainConfig c;
    c.schedule = e.schedule;
    j["settings"] = toJson(c)["schedule"];
  }
  return j;
}

ScheduleExtension extensionFromJson(const RunContext& ctx, const nlohmann::json& j) {
  ScheduleExtension e;
  e.from = j.at("from_step").get<int64_t>();
  e.to = j.at("to_step").get<int64_t>();
  e.how.setName(j.at("schedule").get<std::string>());
  e.lr = j.at("lr").get<double>();
  if (!e.how.known()) throw std::invalid_argument("schedule " + e.how.name());
  if (e.how == ContinueSchedule::restart) {
    nlohmann::json root = toJson(ctx.cfg);
    root["schedule"] = j.at("settings");
    std::vector<ConfigError> errors;
    e.schedule = configFromJson(root, errors).schedule;
    if (!errors.empty()) throw std::invalid_argument(errors.front().text());
  }
  if (e.from < 0 || e.to <= e.from || !(e.lr > 0)) throw std::invalid_argument("a continuation's steps or lr");
  return e;
}

// A resumed run's lineage: the fork's step shift and the continuations.
void readLineage(RunContext& ctx, const nlohmann::json& info) {
  namespace k = run_files::run_info;
  const std::string path = ctx.runDir + "/" + run_files::kSettings;
  try {
    if (info.contains(k::kParent)) {
      ctx.lineage.parent = info[k::kParent];
      ctx.lineage.stepShift = ctx.lineage.parent.value("step_shift", int64_t{0});
    }
    if (info.contains(k::kContinued))
      for (const auto& e : info[k::kContinued]) ctx.lineage.extensions.push_back(extensionFromJson(ctx, e));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigFileError("settings file " + path + ": run_info." + k::kParent + " or run_info." + k::kContinued +
                          " is unreadable (" + e.what() + ")");
  }
}

// The input shape, and how the images were stored when larger
// (storedShapeFromRunInfo reads it back).
nlohmann::json inputJson(const InputShape& s, const StoredShape& stored) {
  nlohmann::json j = {{"channels", s.channels}, {"height", s.height}, {"width", s.width}, {"features", s.features}};
  if (stored.larger(s))
    j["stored"] = {{"height", stored.height}, {"width", stored.width}, {"fit", stored.cover ? "cover" : "squash"}};
  return j;
}

}  // namespace

void resumeRun(RunContext& ctx, const nlohmann::json& stored) {
  const std::string path = ctx.runDir + "/" + run_files::kLastCheckpoint;
  ctx.checkpoints->load(path);
  const RunPosition& at = ctx.position;
  const int64_t world = ctx.world();
  if (at.worldSize != world)
    throw CheckpointError("checkpoint " + path + " was made by " + std::to_string(at.worldSize) +
                          " process(es) and this run has " + std::to_string(world) +
                          ": its position in the epoch holds for " + std::to_string(at.worldSize) +
                          " only; resume with " +
                          (at.worldSize > 1 ? "torchrun --nproc-per-node " + std::to_string(at.worldSize)
                                            : std::string("one process (without torchrun)")) +
                          "; another number of processes needs a new run");
  requirePositionFits(ctx, path, "now has", ": the run's data or batch size changed since; start a new run");
  log::info("resumed at step " + std::to_string(at.step) + " (epoch " + std::to_string(at.epoch) + ", batch " +
            std::to_string(at.batchInEpoch) + ")");
  readLineage(ctx, stored);
}

void startFork(RunContext& ctx, const run_start::Fork& fork) {
  const std::string& path = fork.checkpoint;
  const CheckpointFile file(path);  // read once for every part taken
  const nlohmann::json& parent = ctx.lineage.parent;
  const bool sameOptimizer = parent.value("optimizer", std::string()) == ctx.cfg.optimizer.kind.name();
  CheckpointState read;
  // The fork's callbacks (its weight average, early stopping) start afresh.
  loadCheckpoint(file, ctx.checkpointParts(read), ctx.where.device, /*withOptimizer=*/false);
  if (sameOptimizer) {
    try {
      loadOptimizerState(file, *ctx.parts.optimizer);
    } catch (const CheckpointError& e) {
      ctx.parts.optimizer = std::make_unique<Optimizer>(ctx.parts.model->parameters(), ctx.cfg.optimizer);
      log::info(std::string("the optimizer starts afresh: ") + e.what());
    }
  }
  if (ctx.cfg.precision.mode == PrecisionMode::fp16 && parent.value("precision", std::string()) == "fp16")
    loadScalerState(file, *ctx.parts.scaler);
  const RunPosition at = read.position;
  const int64_t world = ctx.world();
  if (at.worldSize != world && at.batchInEpoch > 0)
    throw CheckpointError("checkpoint " + path + " was made by " + std::to_string(at.worldSize) +
                          " process(es) in the middle of an epoch, and this fork has " + std::to_string(world) +
                          ": its position holds for " + std::to_string(at.worldSize) +
                          " only; fork from a checkpoint at an epoch's end, or with as many processes");
  ctx.position = RunPosition{};
  ctx.position.step = at.step;
  ctx.position.epoch = at.epoch;
  ctx.position.batchInEpoch = at.batchInEpoch;
  requirePositionFits(ctx, path, "has", " with this fork's batch size; fork from a checkpoint at an epoch's end");
  const int64_t k = ctx.cfg.train.accumulation_steps;
  const RunPosition& now = ctx.position;
  ctx.lineage.stepShift = now.step - now.epoch * ctx.steps.stepsPerEpoch - (now.batchInEpoch + k - 1) / k;
  ctx.lineage.parent["step_shift"] = ctx.lineage.stepShift;
  log::info("forked from " + parent.value("run", std::string()) + " (" + parent.value("checkpoint", std::string()) +
            " checkpoint, step " + std::to_string(now.step) + ", epoch " + std::to_string(now.epoch) + ")" +
            (sameOptimizer ? "" : "; the " + ctx.cfg.optimizer.kind + " optimizer starts afresh"));
}

void planSchedule(RunContext& ctx) {
  StepPlan& steps = ctx.steps;
  const auto& extensions = ctx.lineage.extensions;
  // A fork's epochs end where its parent's would have: its steps before the
  // position's epoch began count (train.max_steps counts steps as they are).
  if (ctx.lineage.stepShift != 0)
    steps = planSteps(ctx.globalBatchConfig(), ctx.data.splits.train->size(), ctx.lineage.stepShift);
  if (const std::string why = stepPlanError(ctx.cfg, steps); !why.empty()) throw InputError(why);
  const int64_t planned = steps.totalSteps;
  if (!extensions.empty()) steps.totalSteps = std::max(planned, extensions.back().to);
  // A learning-rate range test sets its own rates, batch-find makes one
  // step per size: the schedule is not used.
  if (const std::string why = schedulePlanError(ctx.cfg.schedule, planned);
      !why.empty() && ctx.position.step < planned && !probes(ctx.start))
    throw InputError(why);
  for (const auto& e : extensions)
    if (const std::string why = schedulePlanError(e.schedule, e.to - e.from, "the continuation's schedule");
        e.how == ContinueSchedule::restart && !why.empty())
      throw InputError(why);
  const OptimizerConfig& o = ctx.cfg.optimizer;
  const double defaultMomentum = o.kind == OptimizerKind::sgd ? o.momentum : o.beta1;
  ctx.parts.schedule = std::make_unique<RunSchedule>(ctx.cfg.schedule, o.lr, planned, extensions, defaultMomentum);
}

void continueRun(RunContext& ctx, const run_start::Continue& x) {
  const RunPosition& at = ctx.position;
  ScheduleExtension e;
  e.how = x.how;
  e.from = x.fromHere ? at.step : std::max(at.step, ctx.steps.totalSteps);
  e.to = e.from + x.epochs * ctx.steps.stepsPerEpoch;
  e.schedule = x.schedule;
  const double lastLr = at.step > 0 ? ctx.lrAt(at.step - 1) : ctx.cfg.optimizer.lr;
  e.lr = x.lr > 0 ? x.lr : x.how == ContinueSchedule::constant ? lastLr : ctx.cfg.optimizer.lr;
  if (ctx.lr.multiplier != 1.0)
    log::info("the learning-rate changes made during the run (x" + fmt(ctx.lr.multiplier) +
              ") end here; the continuation has its own learning rate");
  ctx.lr.multiplier = 1.0;
  ctx.callbacks->onContinue(ctx);  // early stopping counts afresh
  ctx.lineage.extensions.push_back(e);
  planSchedule(ctx);
  log::info("continuing from step " + std::to_string(at.step) + " for " + std::to_string(x.epochs) +
            " more epoch(s): steps " + std::to_string(e.from + 1) + "-" + std::to_string(e.to) + ", " +
            (e.how == ContinueSchedule::constant
                 ? "a constant learning rate of " + fmt(e.lr)
                 : "the " + e.schedule.kind + " schedule started again at learning rate " + fmt(e.lr)));
}

void writeRunSettings(RunContext& ctx) {
  namespace k = run_files::run_info;
  const DataSplits& data = ctx.data.splits;
  const DataPlan& plan = ctx.data.plan;
  nlohmann::json info = {{k::kLibtorch, TORCH_VERSION},
                         {k::kDevice, describeDevice(ctx.where.device)},
                         {k::kTrainExamples, data.train->size()},
                         {k::kTotalSteps, ctx.steps.totalSteps},
                         {k::kNormalization, {{"mean", data.mean}, {"std", data.std}}},
                         {k::kInput, inputJson(data.input, data.stored)},
                         {k::kClasses, data.classNames},
                         {k::kModel, ctx.parts.model->description()},
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
                         {k::kLrChanges, ctx.lr.changes}};
  if (data.kind == DataKind::Table) info[k::kFeatures] = plan.featureNames;
  if (plan.detection()) {
    nlohmann::json categories = nlohmann::json::array();
    for (const auto& c : plan.boxes.categories) categories.push_back({{"id", c.id}, {"name", c.name}});
    info[k::kCategories] = categories;
  }
  if (!ctx.cfg.data.corrections.empty())
    info[k::kData]["corrections"] = {{"file", ctx.cfg.data.corrections},
                                     {"removed", plan.correctionsRemoved},
                                     {"relabelled", plan.correctionsRelabelled}};
  if (!ctx.parts.pretrained.is_null()) info[k::kPretrained] = ctx.parts.pretrained;
  if (!ctx.parts.finetune.is_null()) info[k::kFinetune] = ctx.parts.finetune;
  if (data.task == TaskKind::classification && !data.lossWeights.empty()) info[k::kClassWeights] = data.lossWeights;
  if (data.regression())
    info[k::kTargets] = {{"names", data.targetNames}, {"mean", data.targetMean}, {"std", data.targetStd}};
  if (data.multilabel()) {
    info[k::kTargets] = {
        {"names", data.targetNames}, {"positives", data.labelPositives}, {"threshold", ctx.cfg.task.threshold}};
    if (!data.lossWeights.empty()) info[k::kTargets]["pos_weight"] = data.lossWeights;
  }
  if (!ctx.parts.modelSha256.empty()) info[k::kModelSha256] = ctx.parts.modelSha256;
  if (!ctx.lineage.parent.is_null()) info[k::kParent] = ctx.lineage.parent;
  if (!ctx.lineage.runId.empty()) info[k::kRunId] = ctx.lineage.runId;
  if (probes(ctx.start)) info[k::kProbe] = probeKind(ctx.start);
  if (!ctx.lineage.extensions.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& e : ctx.lineage.extensions) list.push_back(extensionJson(e));
    info[k::kContinued] = list;
  }
  if (ctx.where.ranks) info[k::kWorldSize] = ctx.where.ranks->world();
  if (ctx.where.writer) ctx.recorder->writeSettings(ctx.cfg, info);
}

}  // namespace studio
