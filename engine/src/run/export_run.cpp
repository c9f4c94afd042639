// exportRun (declared in studio/session.h): a run's trained model for use
// outside the studio, with what is needed to feed it.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <algorithm>

#include "data/batch_loader.h"
#include "models/model.h"
#include "run/checkpoint.h"
#include "run/crash_point.h"
#include "run/export_check.h"
#include "run/export_task.h"
#include "run/model_card.h"
#include "run/run_recorder.h"
#include "run/staged_folder.h"
#include "studio/dataset_info.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/run_layout.h"
#include "studio/session.h"

namespace studio {
namespace fs = std::filesystem;

nlohmann::json storedRunInfo(const std::string& runDir) {
  const auto doc =
      nlohmann::json::parse(readFileBytes(runDir + "/" + run_files::kSettings, "settings file"), nullptr, false);
  const char* key = run_files::run_info::kKey;
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_object()) return nlohmann::json::object();
  return doc[key];
}

nlohmann::json readRunInfo(const std::string& runDir) {
  nlohmann::json info = storedRunInfo(runDir);
  if (!info.contains(run_files::run_info::kInput) || !info.contains(run_files::run_info::kClasses))
    throw InputError("settings file " + runDir + "/" + run_files::kSettings +
                     " has no run_info with the data's input shape and classes: the run never got as far as its "
                     "data, or an older Training Studio wrote it");
  return info;
}

std::vector<double> labelThresholds(const std::string& dir, const TrainConfig& config,
                                    const std::vector<std::string>& labels) {
  const std::string path = dir + "/" + run_files::kThresholds;
  if (!fs::exists(path)) return std::vector<double>(labels.size(), config.task.threshold);
  const auto j = nlohmann::json::parse(readFileBytes(path, "thresholds file"), nullptr, false);
  std::vector<double> out;
  for (const auto& label : labels) {
    const nlohmann::json* t =
        j.is_object() && j.contains("thresholds") && j["thresholds"].is_object() && j["thresholds"].contains(label)
            ? &j["thresholds"][label]
            : nullptr;
    if (!t || !t->is_number() || !(t->get<double>() >= 0 && t->get<double>() <= 1))
      throw InputError("thresholds file " + path + " has no threshold in [0, 1] for label \"" + label +
                       "\": move it away (task.threshold is then used) or train the run again");
    out.push_back(t->get<double>());
  }
  return out;
}

StoredShape storedShapeFromRunInfo(const nlohmann::json& info) {
  const InputShape in = inputShapeFromRunInfo(info);
  StoredShape s{in.height, in.width, false};
  const auto& i = info.at(run_files::run_info::kInput);
  const auto stored = i.find("stored");
  if (stored == i.end()) return s;
  try {
    s.height = stored->at("height").get<int64_t>();
    s.width = stored->at("width").get<int64_t>();
    s.cover = stored->value("fit", std::string("cover")) == "cover";
  } catch (const nlohmann::json::exception&) {
    throw InputError(std::string("settings.json's run_info.") + run_files::run_info::kInput +
                     ".stored must hold whole numbers \"height\" and \"width\" (got " +
                     stored->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
  }
  if (s.height < in.height || s.width < in.width || s.height > 4 * 4096 || s.width > 4 * 4096)
    throw InputError(std::string("settings.json's run_info.") + run_files::run_info::kInput +
                     ".stored is not a size at least the input's (got " + stored->dump() + ")");
  return s;
}

int64_t outputsFromRunInfo(const nlohmann::json& info) {
  namespace k = run_files::run_info;
  if (const auto t = info.find(k::kTargets); t != info.end() && t->is_object() && t->contains("names"))
    return static_cast<int64_t>(t->at("names").size());
  return static_cast<int64_t>(info.at(k::kClasses).size());
}

InputShape inputShapeFromRunInfo(const nlohmann::json& info) {
  const auto& i = info.at(run_files::run_info::kInput);
  InputShape s;
  try {
    s.channels = i.value("channels", int64_t{0});
    s.height = i.value("height", int64_t{0});
    s.width = i.value("width", int64_t{0});
    s.features = i.value("features", int64_t{0});
  } catch (const nlohmann::json::exception&) {
    throw InputError(std::string("settings.json's run_info.") + run_files::run_info::kInput +
                     " must hold whole numbers \"channels\", \"height\", \"width\" and \"features\" (got " +
                     i.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
  }
  return s;
}

nlohmann::json preprocessingFacts(const std::string& dir, const TrainConfig& cfg, const nlohmann::json& info) {
  namespace k = run_files::run_info;
  const InputShape input = inputShapeFromRunInfo(info);
  nlohmann::json pre = {{"input", input.features > 0 ? "table" : "image"},
                        {"classes", info.at(k::kClasses)},
                        {"input_shape", info.at(k::kInput)},
                        {"normalization", info.value(k::kNormalization, nlohmann::json::object())},
                        {"task", cfg.task.kind}};
  if (info.contains(k::kCategories)) pre["categories"] = info.at(k::kCategories);
  if (info.contains(k::kTargets)) {
    pre["targets"] = info.at(k::kTargets);
    if (cfg.task.kind == TaskKind::multilabel)
      pre["targets"]["thresholds"] =
          labelThresholds(dir, cfg, info.at(k::kTargets).value("names", std::vector<std::string>{}));
  }
  if (input.features > 0) {
    pre["features"] = info.value(k::kFeatures, nlohmann::json::array());
  } else if (const StoredShape stored = storedShapeFromRunInfo(info); stored.larger(input)) {
    pre["resize"] = std::min(stored.height, stored.width);  // torchvision's Resize(S) + CenterCrop(H, W)
    pre["center_crop"] = {input.height, input.width};
  }
  return pre;
}

namespace {

void checkOptions(const ExportOptions& o) {
  if (!o.which.known())
    throw std::invalid_argument("export: which weights must be " + namesText(o.which) + " (got \"" + o.which.name() +
                                "\")");
  for (const auto& [option, choice] : {std::pair<const char*, const ChoiceValue*>{"--format", &o.format},
                                       {"--quantize", &o.quantize},
                                       {"--calibration", &o.calibration}})
    if (!choice->known())
      throw std::invalid_argument(std::string("export: ") + option + " must be " + namesText(*choice) + " (got \"" +
                                  choice->name() + "\")");
  if (o.quantize == ExportQuantize::int8 && !(o.format == ExportFormat::onnx))
    throw std::invalid_argument("export: --quantize int8 quantizes model.onnx: give --format onnx as well");
  if (o.opset < 13 || o.opset > 23)
    throw std::invalid_argument("export: --opset must be an ONNX opset from 13 to 23 (got " + std::to_string(o.opset) +
                                ")");
  if (o.calibrationExamples < 1 || o.calibrationExamples > 100000)
    throw std::invalid_argument("export: --calibration-examples must be from 1 to 100000 (got " +
                                std::to_string(o.calibrationExamples) + ")");
  if (!(o.tolerance >= 0) || !(o.maxDrop >= 0))
    throw std::invalid_argument("export: --tolerance and --max-drop must be numbers of at least 0");
}

}  // namespace

void prepareExportFolder(const std::string& outDir) {
  // A folder that cannot be made or written is the person's choice to fix
  // (bad input), found before anything is written.
  std::error_code ec;
  // An earlier export there is never overwritten without a word.
  for (const char* name : {run_files::kPreprocessing, run_files::kExportedCheckpoint, "model.pt", "model.onnx",
                           "model.safetensors", "export.json", "README.md"})
    if (fs::exists(fs::symlink_status(outDir + "/" + name, ec)))
      throw InputError("export folder " + outDir + " already holds " + name +
                       " (an earlier export?); nothing was written: choose another folder, or move that one away");
  // The files are staged beside the folder, or in it when it exists
  // (run/staged_folder.h): the folder itself is made when they are complete.
  const fs::path folder = stagedTarget(outDir);
  const bool exists = fs::exists(fs::symlink_status(folder, ec));
  if (exists && !fs::is_directory(folder, ec))
    throw InputError("cannot create export folder " + outDir + ": a file of that name is there");
  const fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  if (!exists) fs::create_directories(parent, ec);
  if (ec) throw InputError("cannot create export folder " + outDir + ": " + ec.message());
  const std::string writes = exists ? folder.string() : parent.string();
  if (::access(writes.c_str(), W_OK | X_OK) != 0)
    throw InputError((exists ? "export folder " + outDir : "the folder " + writes + " of export folder " + outDir) +
                     " cannot be written: " + std::strerror(errno));
}

void copyRunRecords(const std::string& runDir, const std::string& outDir, const ExportWrite& write) {
  std::error_code ec;
  for (const char* name : {run_files::kSettings, run_files::kClasses, run_files::kSplits, run_files::kThresholds,
                           run_files::kSummary, run_files::kMetrics, run_files::kLog})
    if (fs::is_regular_file(runDir + "/" + name)) write(name, readFileBytes(runDir + "/" + name, "run file"));
  const std::string evalDir = runDir + "/" + run_files::kEvalFolder;
  if (fs::is_directory(evalDir) && !fs::is_symlink(evalDir)) {
    fs::create_directories(outDir + "/" + run_files::kEvalFolder, ec);
    for (const auto& e : fs::directory_iterator(evalDir, ec))
      if (e.is_regular_file() && !e.is_symlink())
        write(std::string(run_files::kEvalFolder) + "/" + e.path().filename().string(),
              readFileBytes(e.path().string(), "evaluation file"));
  }
}

// One flow for every task; what differs is its ExportTask's (export_task.h)
// and its model's (Model::exportTo, Model::describeExport).
ExportResult exportRun(const std::string& runDir, const std::string& outDir, const ExportOptions& options) {
  checkOptions(options);
  if (!fs::is_directory(runDir)) throw InputError("run folder " + runDir + " not found");
  const TrainConfig cfg = readRunSettings(runDir);
  const ExportTask& task = exportTask(cfg.task.kind.value());
  const nlohmann::json info = readRunInfo(runDir);
  task.refuse(runDir, options, info);
  const bool checked = task.checked(options);
  ExportResult result;
  const RunCheckpoint chosen = runCheckpoint(runDir, options.which.value());
  result.checkpoint = nameOf(chosen.which);  // auto: the weights of the run's test figures
  const std::string& ckpt = chosen.path;
  if (chosen.fellBack) {
    result.note = std::string(kNoBestCheckpoint) + ", so the last one was exported";
  }
  const InputShape input = inputShapeFromRunInfo(info);
  // A mean or std edited into settings.json is named here, before the
  // export's preprocessing.json passes it on or its check blames the model.
  Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()),
                          input.features == 0, input.features > 0 ? input.features : input.channels, torch::kCPU);
  std::unique_ptr<Model> model = makeModel(cfg.model, input, outputsFromRunInfo(info));
  loadModelWeights(ckpt, *model, /*ema=*/options.which == WeightsChoice::ema);
  requireFiniteWeights(*model, ckpt);

  prepareExportFolder(outDir);
  // Written whole or not at all: a failure (a full disk) leaves no part of
  // an export, and the folder as it was.
  StagedFolder staged(outDir);
  const std::string& dir = staged.path();
  // The check's examples first: a run whose data is gone is refused before
  // anything is written.
  std::string examples;
  struct Unlink {  // the examples file goes however the export ends
    const std::string& path;
    ~Unlink() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } removeExamples{examples};
  CheckExamples facts;
  if (checked) {
    // (A Python without what the check needs is said by the check itself,
    // exit 2, and the staged files go: nothing is written.)
    char path[] = "/tmp/training-studio-export-XXXXXX.safetensors";
    const int fd = ::mkstemps(path, 12);
    if (fd < 0)
      throw IoError(std::string("export: cannot write the check's examples in /tmp: ") + std::strerror(errno));
    ::close(fd);
    examples = path;
    facts = task.writeExamples(cfg, info, *model, options, examples);
  }
  // A write that fails (a full disk) names the export folder, which it left as it was.
  try {
    for (const auto& f : model->exportTo(dir)) result.files.push_back(f);
    auto write = [&](const std::string& name, const std::string& bytes) {
      writeFileAtomically(dir + "/" + name, bytes);  // never through a link planted there
      result.files.push_back(dir + "/" + name);
    };
    // How to turn raw data into the model's input, as the run did.
    // format: what training-studio-cli predict reads (predict/predictor.cpp);
    // weights: which of the run's it holds (checkpoint.ckpt, or its moving average).
    nlohmann::json pre = {
        {"format", run_files::kExportFormat}, {"studio_version", STUDIO_VERSION}, {"weights", result.checkpoint}};
    pre.update(preprocessingFacts(runDir, cfg, info));
    task.describe(pre, cfg, info, options);
    model->describeExport(pre);
    write(run_files::kPreprocessing, pre.dump(2) + "\n");
    task.writeFiles(pre, write);
    write(run_files::kExportedCheckpoint, readFileBytes(ckpt, "checkpoint"));
    copyRunRecords(runDir, dir, write);
    // The check in Python, then the model card with what it found (also when
    // it failed: the card says so, and the files stay for a look).
    auto card = [&] {
      ModelCardFacts m{runDir, dir, cfg, info, *model, result.checkpoint, checked ? &facts : nullptr};
      write("README.md", modelCard(m));
    };
    if (checked) {
      try {
        result.checks = runExportCheck(dir, examples, options, outDir);
      } catch (const ExportCheckFailed&) {
        card();
        staged.commit();
        throw;
      }
      if (fs::is_regular_file(dir + "/model.onnx")) result.files.push_back(dir + "/model.onnx");
      if (fs::is_regular_file(dir + "/model.int8.onnx")) result.files.push_back(dir + "/model.int8.onnx");
      result.files.push_back(dir + "/export.json");
    }
    card();
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + "; the export stopped and " + outDir + " is as it was before it");
  }
  crashPoint("export-before-commit");
  staged.commit();
  for (auto& f : result.files) f = staged.finalPath(f);
  return result;
}

}  // namespace studio
