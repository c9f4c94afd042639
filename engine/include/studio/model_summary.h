#pragma once
// A model's layers as the settings build it: each top-level layer's output
// shape and parameter count, and the totals, for built-ins and TorchScript
// models alike. The data is planned (not decoded) for its input shape and
// class count; the model is built on the CPU and run on a batch of 2 zero
// examples. A TorchScript model's code runs.
// Torch-free header; implemented in the engine.
// Thread: any thread (one model summary at a time per thread).

#include <cstdint>
#include <string>
#include <vector>

#include "studio/train_config.h"

namespace studio {

struct ModelSummaryRow {
  std::string name, type;
  std::string output;  // "[2, 32, 14, 14]", or "" when unknown
  int64_t parameters = 0;
  // train.finetune: when the layer trains and its learning-rate factor
  // ("frozen to epoch 2, lr x0.1"); "" without fine-tuning or parameters.
  std::string finetune;
};

struct ModelSummary {
  std::string model;  // "cnn w32 d2", "TorchScript net.ts"
  std::string input;  // "[2, 1, 28, 28]"
  std::string output;
  std::vector<std::string> classNames;
  std::vector<ModelSummaryRow> rows;
  int64_t parameters = 0;           // every parameter
  int64_t trainableParameters = 0;  // those the optimizer updates
  int64_t firstEpochTrained = 0;    // of them, those epoch 1 trains (train.finetune's frozen groups left out)
  int64_t stateTensors = 0;         // parameters and buffers a checkpoint holds
  bool finetune = false;            // the rows say how train.finetune trains them
  std::string weights;              // model.weights the run starts from ("" none)
};

// Throws InputError (DataError, ModelError) naming what is wrong.
ModelSummary summarizeModel(const TrainConfig& config);

// The table the CLI prints.
std::string formatModelSummary(const ModelSummary& summary);

}  // namespace studio
