#pragma once
// Fine-tuning's plan (train.finetune): the model's parameters in layer
// groups from the input to the head, each group's learning-rate factor and
// the epoch it starts training. The callback (callbacks/finetune.cpp) acts
// on it; the model summary shows it.
// Thread: any.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "studio/train_config.h"

namespace studio {

class Model;

struct FinetunePlan {
  std::vector<std::string> groups;       // in order, the head last
  std::vector<double> factors;           // of the head's learning rate
  std::vector<int64_t> trainsFromEpoch;  // 0-based; 0: from the start
  std::vector<size_t> groupOfParameter;  // per Model::namedParameters() entry
  bool active() const;                   // anything frozen or scaled
};

// The groups: each parameter's Model::layerGroup, in the order they first
// appear; the head is the last (or, for TorchScript with
// train.finetune.head_prefix, the parameters named so, as group "head").
// factor(i) = f^((G-1-i)/(G-1)) (fastai's even_mults from f to 1); with
// freeze_epochs F, the head trains from epoch 0, every other group from F,
// or with gradual, group G-2 from F, G-3 from F+1, and so on.
FinetunePlan planFinetune(Model& model, const ModelConfig& modelConfig, const FinetuneConfig& config);

// The group a parameter (or a layer's "<name>.weight") belongs to, by the
// rule above: "head" for head_prefix's names, else Model::layerGroup.
std::string finetuneGroup(const Model& model, const ModelConfig& modelConfig, const FinetuneConfig& config,
                          const std::string& parameter);

}  // namespace studio
