#pragma once
// An export is one flow (exportRun, export_run.cpp): the checkpoint chosen,
// the model built and loaded, its files (Model::exportTo), preprocessing.json,
// checkpoint.ckpt, the run's records, the check in Python and the model card
// (model_card.h). What depends on the run's task is its ExportTask's: the
// options and run facts it needs, whether its files are checked in Python,
// what preprocessing.json says of its input and outputs, and its parts of
// the model card. A new task kind adds its ExportTask here.
// And the steps every export shares.
// Thread: the caller's.

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/box_annotations.h"
#include "studio/session.h"
#include "studio/train_config.h"

namespace studio {

// What the model card (model_card.cpp) knows of the export, for a task's
// parts of it.
struct CheckExamples;
class Model;
struct CardFacts {
  const TrainConfig& config;
  const nlohmann::json& pre;       // preprocessing.json
  const nlohmann::json& exported;  // export.json (its "onnx" part when model.onnx was written)
  const nlohmann::json& runInfo;
  const nlohmann::json& report;         // the last evaluation of the test split (eval/step-N.json), or {}
  const CheckExamples* data = nullptr;  // the classes' counts when the export loaded the data
  bool torchscript = false;
};

class ExportTask {
 public:
  virtual ~ExportTask() = default;
  // InputError for an option this task's export does not build, or a fact
  // of the run it needs and the run lacks: before anything is written.
  virtual void refuse(const std::string& runDir, const ExportOptions& options, const nlohmann::json& runInfo) const {}
  // Whether the export runs the check in the studio's Python (export_check.h).
  virtual bool checked(const ExportOptions& options) const = 0;
  // The check's examples file (export_check.h): writeCheckExamples's, a
  // batch of the run's examples as stored; a task whose examples are not
  // one size writes its own.
  virtual CheckExamples writeExamples(const TrainConfig& config, const nlohmann::json& runInfo, Model& model,
                                      const ExportOptions& options, const std::string& file) const;
  // preprocessing.json's "how" and "outputs" (and "onnx" where it writes model.onnx).
  virtual void describe(nlohmann::json& pre, const TrainConfig& config, const nlohmann::json& runInfo,
                        const ExportOptions& options) const = 0;
  // Files of the task's own beside the model's (pre: preprocessing.json as written).
  virtual void writeFiles(const nlohmann::json& pre,
                          const std::function<void(const std::string& name, const std::string& bytes)>& write) const {}
  // Its parts of the model card; the card writes the rest alike for every
  // task. The model's files ("`model.safetensors` with `model.py`"):
  virtual std::string cardFiles(const CardFacts& c) const = 0;
  // "- Input: ..." (and what builds the model, where that is not model.py).
  virtual void cardInput(std::ostream& o, const CardFacts& c) const = 0;
  // "- Output ...: ...; the classes: ", and the names it speaks of, which
  // the card lists after it.
  virtual std::vector<std::string> cardOutput(std::ostream& o, const CardFacts& c) const = 0;
  // After "- Examples: ..." in "## What it was trained on" (a classifier's
  // examples per class).
  virtual void cardData(std::ostream& o, const CardFacts& c) const {}
  // "Test accuracy": a test figure's name in "## How it did", for each of
  // the task's (taskTestFigures).
  virtual std::string cardFigureName(const std::string& id) const;
  // "## How to run it".
  virtual void cardUsage(std::ostream& o, const CardFacts& c, size_t outputs) const = 0;
};
const ExportTask& exportTask(TaskKind kind);
const ExportTask& maskExportTask();  // mask_export.cpp

// Refuses a folder that holds an earlier export (nothing is overwritten),
// then makes it; InputError naming it when it cannot be made or written.
void prepareExportFolder(const std::string& outDir);

// Writes a file of the export (its name under the folder, its bytes).
using ExportWrite = std::function<void(const std::string& name, const std::string& bytes)>;
// The run's records (settings.json, classes.json, thresholds.json,
// summary.json, metrics.csv, log.txt and eval/) into the export.
void copyRunRecords(const std::string& runDir, const std::string& outDir, const ExportWrite& write);

// A detection run's categories (settings.json's run_info.categories: the
// annotations' ids and names in the order of its classes); InputError when
// the run does not record them (an earlier Training Studio trained it) or
// they are not {id, name} pairs. predict and export speak the file's ids.
std::vector<BoxCategory> readRunCategories(const std::string& runDir, const nlohmann::json& runInfo);

}  // namespace studio
