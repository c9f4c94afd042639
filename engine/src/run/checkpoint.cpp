#include "run/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "run/crash_point.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"
#include "tensors/tensor_archive.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "training-studio-checkpoint";
constexpr int64_t kVersion = 2;

// Callback figures older than "callback_figures": early stopping's, kept in
// "counters" under their first names and types, written when no callback
// gave them (early stopping off) as they always were, so checkpoints stay
// byte for byte what they were.
struct LegacyFigure {
  const char* name;    // in CheckpointState::callbackFigures
  const char* onDisk;  // in "counters"
  bool whole;          // stored as an integer
  double absent;
};
constexpr LegacyFigure kInCounters[] = {
    {"early_stopping.best", "early_best", false, std::numeric_limits<double>::quiet_NaN()},
    {"early_stopping.best_step", "early_best_step", true, 0},
    {"early_stopping.bad_evals", "early_bad_evals", true, 0},
};
bool inCounters(const std::string& name) {
  for (const LegacyFigure& f : kInCounters)
    if (name == f.name) return true;
  return false;
}

c10::impl::GenericDict newDict() { return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get()); }

void loadModelState(const ArchiveDict& stored, Model& model, const std::string& path) {
  std::map<std::string, torch::Tensor> byName;
  for (auto& [name, t] : stored.namedTensors()) byName[name] = t;
  torch::NoGradGuard noGrad;
  const auto own = model.namedState();
  for (const auto& [name, t] : own) {
    auto it = byName.find(name);
    if (it == byName.end())
      throw CheckpointError("checkpoint " + path + " does not match the model of its settings: it has no " + name);
    if (!it->second.sizes().equals(t.sizes()))
      throw CheckpointError("checkpoint " + path + " does not match the model of its settings: " + name +
                            " has shape " + c10::str(it->second.sizes()) + " there and " + c10::str(t.sizes()) +
                            " in the model");
    t.copy_(it->second);
    byName.erase(it);
  }
  if (!byName.empty())
    throw CheckpointError("checkpoint " + path + " does not match the model of its settings: it holds " +
                          byName.begin()->first + ", which the model has not");
}

ArchiveDict openCheckpoint(const std::string& path) {
  if (!fs::exists(path)) throw CheckpointError("checkpoint " + path + " not found");
  const std::string bytes = readFileBytes(path, "checkpoint");
  ArchiveDict root(loadTensorArchive(bytes, path, "checkpoint"), path, "");
  if (!root.has("format") || !root.at("format").isString() || root.text("format") != kFormat)
    throw CheckpointError("checkpoint " + path + " is not a Training Studio checkpoint");
  const int64_t version = root.integer("version");
  if (version != kVersion)
    throw CheckpointError("checkpoint " + path + " has format version " + std::to_string(version) +
                          "; this Training Studio reads version " + std::to_string(kVersion));
  return root;
}

}  // namespace

void saveCheckpoint(const std::vector<std::string>& paths, CheckpointParts p) {
  auto a = newDict();
  a.insert("format", kFormat);
  a.insert("version", kVersion);
  auto model = newDict();
  for (const auto& [name, t] : p.model.namedState()) model.insert(name, t.detach());
  a.insert("model", model);
  a.insert("optimizer", p.optimizer.state());
  a.insert("scaler", p.scaler.state());
  a.insert("skipped", p.skipped);
  if (p.ema && p.ema->started()) {
    auto ema = newDict();
    for (const auto& [name, t] : p.ema->named(p.model)) ema.insert(name, t.detach());
    a.insert("ema", ema);
    a.insert("ema_updates", p.ema->updates());
  }
  const CheckpointState& c = p.state;
  auto counters = newDict();
  counters.insert("step", c.position.step);
  counters.insert("epoch", c.position.epoch);
  counters.insert("batch_in_epoch", c.position.batchInEpoch);
  counters.insert("lr_multiplier", c.lr.multiplier);
  counters.insert("best_accuracy", c.bestAccuracy);
  counters.insert("wall_seconds", c.position.wallSeconds);
  counters.insert("nonfinite_steps", c.nonfinite.steps);
  counters.insert("rollbacks", c.nonfinite.rollbacks);
  counters.insert("micro_split", c.position.microSplit);
  for (const LegacyFigure& f : kInCounters) {
    const auto it = c.callbackFigures.find(f.name);
    const double v = it != c.callbackFigures.end() ? it->second : f.absent;
    if (f.whole)
      counters.insert(f.onDisk, static_cast<int64_t>(v));
    else
      counters.insert(f.onDisk, v);
  }
  counters.insert("lr_changes", c.lr.changes.dump());
  counters.insert("world_size", c.position.worldSize);
  if (!c.runId.empty()) counters.insert("run_id", c.runId);
  a.insert("counters", counters);
  auto figures = newDict();
  bool any = false;
  for (const auto& [name, value] : c.callbackFigures)
    if (!inCounters(name)) {
      figures.insert(name, value);
      any = true;
    }
  if (any) a.insert("callback_figures", figures);
  auto rng = newDict();
  rng.insert("cpu", at::detail::getDefaultCPUGenerator().get_state());
  const torch::Device dev = p.skipped.device();
  if (dev.is_cuda()) rng.insert("cuda", at::globalContext().defaultGenerator(dev).get_state());
  a.insert("rng", rng);
  // Serialised in memory, then written by our own writer: it reports a full
  // disk and never writes through a link.
  std::string data;
  try {
    data = saveTensorArchive(a);
  } catch (const c10::Error& e) {
    throw IoError("cannot serialise checkpoint " + paths.front() + ": " + e.what_without_backtrace());
  }
  const auto phase = [](const char* phase) { crashPoint(std::string("checkpoint-after-") + phase); };
  for (const auto& path : paths) {
    crashPoint("checkpoint-before-temp");
    // A second name at the same step (best.ckpt) links the first file: one copy on the disk.
    if (&path != &paths.front() && linkFileAtomically(paths.front(), path, phase)) continue;
    writeFileAtomically(path, data, phase);  // names the file on failure
  }
}

namespace {
CheckpointState stateOf(const ArchiveDict& a, const std::string& path) {
  const ArchiveDict counters = a.dict("counters");
  CheckpointState c;
  RunPosition& at = c.position;
  at.step = counters.integer("step");
  at.epoch = counters.integer("epoch");
  at.batchInEpoch = counters.integer("batch_in_epoch");
  c.lr.multiplier = counters.real("lr_multiplier");
  c.bestAccuracy = counters.real("best_accuracy");
  at.wallSeconds = counters.real("wall_seconds");
  c.nonfinite.steps = counters.integer("nonfinite_steps");
  c.nonfinite.rollbacks = counters.integer("rollbacks");
  if (counters.has("micro_split")) at.microSplit = std::max<int64_t>(1, counters.integer("micro_split"));
  for (const LegacyFigure& f : kInCounters)  // checkpoints from before early stopping have none
    if (counters.has(f.onDisk))
      c.callbackFigures[f.name] = f.whole ? static_cast<double>(counters.integer(f.onDisk)) : counters.real(f.onDisk);
  if (counters.has("world_size")) at.worldSize = counters.integer("world_size");
  if (counters.has("run_id")) c.runId = counters.text("run_id");
  c.lr.changes = nlohmann::json::parse(counters.text("lr_changes"), nullptr, false);
  if (c.lr.changes.is_discarded() || !c.lr.changes.is_array())
    throw CheckpointError("checkpoint " + path + " is damaged: its learning-rate changes are unreadable");
  if (at.step < 0 || at.epoch < 0 || at.batchInEpoch < 0)
    throw CheckpointError("checkpoint " + path + " is damaged: it records a negative position");
  if (a.has("callback_figures")) {
    const ArchiveDict figures = a.dict("callback_figures");
    for (const std::string& name : figures.keys()) c.callbackFigures[name] = figures.real(name);
  }
  return c;
}
}  // namespace

CheckpointFile::CheckpointFile(const std::string& p) : path(p), root(openCheckpoint(p)) {}

CheckpointState loadModelWeights(const std::string& path, Model& model, bool ema) {
  const ArchiveDict a = openCheckpoint(path);
  if (ema && !a.has("ema"))
    throw CheckpointError("checkpoint " + path +
                          " holds no weight average: the run had train.ema.decay 0, or "
                          "stopped before train.ema.start_step");
  loadModelState(a.dict(ema ? "ema" : "model"), model, path);
  return stateOf(a, path);
}

void requireFiniteWeights(Model& model, const std::string& path) {
  torch::NoGradGuard noGrad;
  for (const auto& [name, t] : model.namedState()) {
    if (!t.is_floating_point()) continue;
    const torch::Tensor finite = torch::isfinite(t);
    if (finite.all().item<bool>()) continue;
    const int64_t bad = t.numel() - finite.sum().item<int64_t>();
    throw CheckpointError("checkpoint " + path + " holds NaN or infinite weights: " + std::to_string(bad) + " of " +
                          std::to_string(t.numel()) + " values of " + name +
                          " (the run diverged before it was written, or the file was edited); nothing was written: "
                          "choose another of the run's checkpoints (best, last or ema)");
  }
}

CheckpointState readCheckpointState(const std::string& path) { return stateOf(openCheckpoint(path), path); }
CheckpointState readCheckpointState(const CheckpointFile& file) { return stateOf(file.root, file.path); }

void loadOptimizerState(const CheckpointFile& file, Optimizer& optimizer) {
  optimizer.loadState(file.root.dict("optimizer"), file.path);
}

void loadScalerState(const CheckpointFile& file, LossScaler& scaler) { scaler.loadState(file.root.dict("scaler")); }

void loadCheckpoint(const std::string& path, CheckpointParts p, const torch::Device& device, bool withOptimizer) {
  loadCheckpoint(CheckpointFile(path), p, device, withOptimizer);
}

void loadCheckpoint(const CheckpointFile& file, CheckpointParts p, const torch::Device& device, bool withOptimizer) {
  const ArchiveDict& a = file.root;
  const std::string& path = file.path;
  loadModelState(a.dict("model"), p.model, path);
  if (withOptimizer) {
    p.optimizer.loadState(a.dict("optimizer"), path);
    p.scaler.loadState(a.dict("scaler"));
    torch::NoGradGuard noGrad;
    p.skipped.copy_(a.tensor("skipped"));
  }
  p.state = stateOf(a, path);
  if (p.ema && a.has("ema")) {
    std::vector<std::pair<std::string, torch::Tensor>> stored;
    for (auto& [name, t] : a.dict("ema").namedTensors()) stored.emplace_back(name, t);
    try {
      p.ema->load(p.model, stored, a.integer("ema_updates"));
    } catch (const CheckpointError& e) {
      throw CheckpointError("checkpoint " + path + ": " + e.what());
    }
  } else if (p.ema) {
    p.ema->reset();  // saved before the average started
  }
  const ArchiveDict rng = a.dict("rng");
  auto restore = [&](at::Generator gen, const torch::Tensor& state) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    try {
      gen.set_state(state.cpu());
    } catch (const c10::Error& e) {
      throw CheckpointError("checkpoint " + path + " is damaged: its random-number state is unusable");
    }
  };
  restore(at::detail::getDefaultCPUGenerator(), rng.tensor("cpu"));
  if (device.is_cuda() && rng.has("cuda")) restore(at::globalContext().defaultGenerator(device), rng.tensor("cuda"));
}

RunCheckpoint runCheckpoint(const std::string& runDir, WeightsChoice which) {
  if (which == WeightsChoice::auto_) {
    // Before summary.json (a live or stopped run), or with an unreadable
    // one: the best checkpoint, as before.
    const std::string& named = readSummaryFile(runDir).summary.test.weights;
    const bool last = choiceNamed<WeightsChoice>(named) == WeightsChoice::last;
    return runCheckpoint(runDir, last ? WeightsChoice::last : WeightsChoice::best);
  }
  const bool best = which == WeightsChoice::best;
  RunCheckpoint c{runDir + "/" + (best ? run_files::kBestCheckpoint : run_files::kLastCheckpoint), false, which};
  if (best && !std::filesystem::exists(c.path)) {
    c.path = runDir + "/" + run_files::kLastCheckpoint;
    c.fellBack = true;
    c.which = WeightsChoice::last;
  }
  return c;
}

}  // namespace studio
