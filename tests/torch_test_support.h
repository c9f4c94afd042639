#pragma once
// Reading a run's trained weights back, for the suites that look inside;
// golden numbers as tensors.
#include <memory>
#include <vector>

#include "models/model.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/run_layout.h"
#include "text_file.h"

namespace studio::test {

// A float32 tensor of `shape` from a golden file's list of numbers.
inline torch::Tensor tensorOf(const nlohmann::json& values, const std::vector<int64_t>& shape) {
  std::vector<float> v;
  for (const auto& x : values) v.push_back(static_cast<float>(x.get<double>()));
  return torch::from_blob(v.data(), shape, torch::kFloat32).clone();
}

inline nlohmann::json runInfo(const std::string& runDir) {
  return nlohmann::json::parse(readText(runDir + "/settings.json"))[run_files::run_info::kKey];
}

// The run's model with the weights of checkpoints/<which>.ckpt (or of a
// checkpoint file given by path).
inline std::unique_ptr<Model> weightsOf(const std::string& runDir, const std::string& which = "last",
                                        const std::string& checkpoint = "") {
  TrainConfig cfg = readRunSettings(runDir);
  const nlohmann::json info = runInfo(runDir);
  auto model = makeModel(cfg.model, inputShapeFromRunInfo(info),
                         static_cast<int64_t>(info[run_files::run_info::kClasses].size()));
  loadModelWeights(checkpoint.empty() ? runDir + "/checkpoints/" + which + ".ckpt" : checkpoint, *model);
  return model;
}

// name -> tensor of a model's parameters and buffers.
inline std::map<std::string, torch::Tensor> stateOf(Model& m) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] : m.namedState()) out[name] = t;
  return out;
}

}  // namespace studio::test
