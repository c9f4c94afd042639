#pragma once
// A detection run's export (exportRun hands it over): model.safetensors
// under torchvision's names, model.py whose build() makes torchvision's
// detector as the run built it and loads them strict, preprocessing.json
// (classes, the annotations' category ids, the detector's settings),
// checkpoint.ckpt, the run's records, and a model card (README.md).
// And the two steps every export shares (export_run.cpp).
// Thread: the caller's.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/box_annotations.h"
#include "studio/session.h"
#include "studio/train_config.h"

namespace studio {

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

// InputError for what a detector's export does not do yet (--format onnx,
// --check, --quantize), before anything is written.
ExportResult exportDetector(const std::string& runDir, const std::string& outDir, const ExportOptions& options,
                            const TrainConfig& config);

}  // namespace studio
