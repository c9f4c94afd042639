#pragma once
// The model card: README.md in every export folder, for the person who
// receives the model. What it is, what it was trained on, how it did, how it
// was trained, how to run it (PyTorch, ONNX Runtime in Python and in C++;
// a detector's torchvision call), and the limits its figures show. One
// writer for every task, with the task's parts (its outputs, its classes'
// table, its figures, its snippets). Written from the export's own files
// (summary.json, the evaluations, export.json) and the run's settings.

#include <string>

#include <nlohmann/json.hpp>

#include "studio/train_config.h"

namespace studio {

class Model;
struct CheckExamples;

struct ModelCardFacts {
  const std::string& runDir;
  const std::string& outDir;  // the export, its files written
  const TrainConfig& config;
  const nlohmann::json& runInfo;
  Model& model;
  const std::string& weights;           // best, last or ema
  const CheckExamples* data = nullptr;  // the classes' counts when the export loaded the data
};

std::string modelCard(const ModelCardFacts& facts);

}  // namespace studio
