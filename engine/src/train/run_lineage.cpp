#include "train/run_lineage.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "models/model.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"
#include "studio/settings_schema.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

void requireRunFolder(const std::string& dir) {
  if (dir.empty()) throw InputError("no run folder given");
  if (!fs::is_directory(dir)) throw InputError("run folder " + dir + " not found");
}

// "checkpoints/last.ckpt (step 120), checkpoints/best.ckpt (step 80)".
std::string checkpointsOf(const std::string& runDir) {
  std::string list;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runDir + "/" + run_files::kCheckpoints, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    std::string step = "unreadable";
    try {
      step = "step " + std::to_string(readCheckpointState(entry.path().string()).position.step);
    } catch (const std::exception&) {
    }
    list += (list.empty() ? "" : ", ") + entry.path().stem().string() + " (" + step + ")";
  }
  return list.empty() ? "none" : list;
}

}  // namespace

ForkPlan planFork(const std::string& parentDir, const ForkOptions& options) {
  requireRunFolder(parentDir);
  const std::string& from = options.from;
  std::string file;
  if (from == "last")
    file = run_files::kLastCheckpoint;
  else if (from == "best")
    file = run_files::kBestCheckpoint;
  else if (from.rfind("step-", 0) == 0 && from.size() > 5 && from.size() < 25 &&
           from.find_first_not_of("0123456789", 5) == std::string::npos)
    file = run_files::stepCheckpoint(std::stoll(from.substr(5)));
  else
    throw InputError("fork --from must be best, last or step-N (got \"" + from + "\")");
  ForkPlan plan;
  plan.checkpoint = parentDir + "/" + file;
  if (!fs::is_regular_file(plan.checkpoint))
    throw CheckpointError("run " + parentDir + " has no " + from + " checkpoint (" + file +
                          "); its checkpoints: " + checkpointsOf(parentDir) +
                          (from.rfind("step-", 0) == 0 ? " (a run keeps every evaluation's checkpoint with "
                                                         "output.keep_checkpoints true)"
                                                       : ""));
  const TrainConfig parent = readRunSettings(parentDir);
  const nlohmann::json info = readRunInfo(parentDir);

  TrainConfig child = parent;
  child.name = parent.name + "-fork";
  for (const auto& o : options.overrides) applyOverride(child, o);
  child.output.dir = !options.outputDir.empty() ? options.outputDir
                     : fs::path(parentDir).lexically_normal().has_parent_path()
                         ? fs::path(parentDir).lexically_normal().parent_path().string()
                         : std::string(".");
  const nlohmann::json changed = settingsChanges(parent, child);
  for (auto it = changed.begin(); it != changed.end(); ++it)
    if (!settingForkable(it.key()))
      throw InputError("fork cannot change " + it.key() + " (" + it.value()[0].dump() + " in the parent, " +
                       it.value()[1].dump() +
                       " asked): the checkpoint's weights belong to the parent's model "
                       "and data; start a new run for that");
  const auto errors = validate(child);
  if (!errors.empty()) throw InvalidSettings(errors, "the fork of " + parentDir);
  for (const auto& w : settingsWithoutEffect(child, options.overrides)) log::warn("fork: " + w.text());

  // The checkpoint must be readable and fit the parent's model: checked now,
  // before a folder exists.
  const int64_t classes = outputsFromRunInfo(info);
  const RunPosition at =
      loadModelWeights(plan.checkpoint, *makeModel(parent.model, inputShapeFromRunInfo(info), classes)).position;
  const bool batchChanged = changed.contains("train.batch_size") || changed.contains("train.accumulation_steps");
  if (batchChanged && at.batchInEpoch != 0)
    throw InputError("fork --from " + from + ": that checkpoint is at step " + std::to_string(at.step) +
                     ", in the middle of epoch " + std::to_string(at.epoch + 1) +
                     "; a fork that changes train.batch_size or train.accumulation_steps starts from a checkpoint "
                     "at an epoch's end (evaluation.every_steps 0 puts every evaluation there)");
  // The first of train.max_steps and train.epochs to come ends a run.
  const bool stepsEnd = child.train.max_steps > 0 && child.train.max_steps <= at.step;
  const bool epochsEnd = child.train.epochs > 0 && child.train.epochs <= at.epoch;
  if (stepsEnd || epochsEnd)
    throw InputError("fork --from " + from + " starts at step " + std::to_string(at.step) +
                     ", where the fork's "
                     "plan already ends: raise " +
                     (stepsEnd ? "train.max_steps above " + std::to_string(at.step)
                               : "train.epochs above " + std::to_string(at.epoch) +
                                     " (--set train.epochs=" + std::to_string(at.epoch + 1) + ")"));
  plan.parent = {{"run", fs::absolute(parentDir).lexically_normal().string()},
                 {"checkpoint", from},
                 {"step", at.step},
                 {"epoch", at.epoch},
                 {"changed", changed},
                 {"optimizer", parent.optimizer.kind},
                 {"precision", parent.precision.mode}};
  plan.config = std::move(child);
  return plan;
}

TrainConfig readResumableRun(const std::string& runDir, const std::string& verb, bool* fromStart) {
  if (!fs::is_directory(runDir)) throw std::invalid_argument("run folder " + runDir + " not found");
  TrainConfig config = readRunSettings(runDir);
  const auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors, "settings file " + runDir + "/" + run_files::kSettings);
  requireRealDirectory(runDir + "/" + run_files::kCheckpoints);  // never written through a link
  if (fromStart) *fromStart = false;
  if (fs::exists(runDir + "/" + run_files::kLastCheckpoint)) return config;
  const std::string none = "run folder " + runDir + " has no " + run_files::kLastCheckpoint + " to " + verb + " from";
  if (!fromStart) throw std::invalid_argument(none);
  if (const nlohmann::json info = storedRunInfo(runDir); info.contains(run_files::run_info::kParent)) {
    const nlohmann::json& parent = info[run_files::run_info::kParent];
    const bool named = parent.is_object() && parent.contains("run") && parent["run"].is_string();
    const std::string from = named ? parent["run"].get<std::string>() : "its parent";
    throw std::invalid_argument(none + ": the fork was stopped before its first checkpoint, and it starts from " +
                                from + "'s checkpoint; fork that run again");
  }
  *fromStart = true;
  return config;
}

std::pair<TrainConfig, run_start::Continue> planContinue(const std::string& runDir, const ContinueOptions& options) {
  if (options.epochs < 1)
    throw InputError("continue --epochs must be 1 or more (got " + std::to_string(options.epochs) + ")");
  if (!options.schedule.known())
    throw InputError("continue --schedule must be " + namesText(options.schedule) + " (got \"" +
                     options.schedule.name() + "\")");
  if (!(options.lr >= 0) || !std::isfinite(options.lr))
    throw InputError("continue --lr must be a learning rate > 0 (got " + std::to_string(options.lr) + ")");
  TrainConfig config = readResumableRun(runDir, "continue");

  TrainConfig edited = config;
  for (const auto& o : options.scheduleOverrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key.rfind("schedule.", 0) != 0)
      throw InputError("continue --set changes only the schedule (schedule.*), not " + key + "; to change " + key +
                       ", fork the run: training-studio-cli fork " + runDir + " --set " + o);
    if (options.schedule == ContinueSchedule::constant)
      throw InputError("continue --set " + o + " is for --schedule restart; a constant schedule takes only --lr");
    applyOverride(edited, o);
  }
  if (const auto errors = validate(edited); !errors.empty()) throw InvalidSettings(errors, "continue --set");

  run_start::Continue extend;
  extend.epochs = options.epochs;
  extend.how = options.schedule;
  extend.schedule = edited.schedule;
  extend.lr = options.lr;
  const SummaryFile summary = readSummaryFile(runDir);
  if (std::find(summary.wrongTypes.begin(), summary.wrongTypes.end(), "status") != summary.wrongTypes.end())
    throw InputError("summary file " + runDir + "/" + run_files::kSummary +
                     ": \"status\" must be text such as \"completed\"; correct it, or remove the file");
  extend.fromHere = summary.summary.status == RunStatus::early_stopped;
  return {config, extend};
}

}  // namespace studio
