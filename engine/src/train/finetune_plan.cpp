#include "train/finetune_plan.h"

#include <algorithm>
#include <cmath>

#include "models/model.h"
#include "studio/errors.h"
#include "studio/model_kinds.h"

namespace studio {

bool FinetunePlan::active() const {
  return std::any_of(factors.begin(), factors.end(), [](double f) { return f != 1.0; }) ||
         std::any_of(trainsFromEpoch.begin(), trainsFromEpoch.end(), [](int64_t e) { return e > 0; });
}

namespace {

bool byPrefix(const ModelConfig& m, const FinetuneConfig& c) {
  return isModel(m.kind, ModelFamily::torchscript) && !c.head_prefix.empty();
}

}  // namespace

std::string finetuneGroup(const Model& model, const ModelConfig& m, const FinetuneConfig& c,
                          const std::string& parameter) {
  return byPrefix(m, c) && parameter.rfind(c.head_prefix, 0) == 0 ? "head" : model.layerGroup(parameter);
}

FinetunePlan planFinetune(Model& model, const ModelConfig& m, const FinetuneConfig& c) {
  FinetunePlan plan;
  const auto params = model.namedParameters();
  std::vector<std::string> groupNames;
  for (const auto& [name, t] : params) {
    const std::string g = finetuneGroup(model, m, c, name);
    groupNames.push_back(g);
    if (g != "head" && std::find(plan.groups.begin(), plan.groups.end(), g) == plan.groups.end())
      plan.groups.push_back(g);
  }
  if (byPrefix(m, c)) {
    if (std::find(groupNames.begin(), groupNames.end(), "head") == groupNames.end())
      throw ModelError("train.finetune.head_prefix \"" + c.head_prefix + "\" names no parameter of " +
                       model.description() + " (its parameters begin " +
                       (params.empty() ? std::string("with nothing") : params.front().first) + ")");
    plan.groups.push_back("head");
  }
  const size_t G = plan.groups.size();
  for (const auto& g : groupNames)
    plan.groupOfParameter.push_back(
        static_cast<size_t>(std::find(plan.groups.begin(), plan.groups.end(), g) - plan.groups.begin()));
  for (size_t i = 0; i < G; ++i) {
    const double share = G > 1 ? static_cast<double>(G - 1 - i) / static_cast<double>(G - 1) : 0.0;
    plan.factors.push_back(c.backbone_lr_factor == 1.0 ? 1.0 : std::pow(c.backbone_lr_factor, share));
    int64_t from = 0;
    if (c.freeze_epochs > 0 && i + 1 < G)
      from = c.gradual ? c.freeze_epochs + static_cast<int64_t>(G - 2 - i) : c.freeze_epochs;
    plan.trainsFromEpoch.push_back(from);
  }
  return plan;
}

}  // namespace studio
