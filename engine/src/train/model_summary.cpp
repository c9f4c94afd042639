#include "studio/model_summary.h"

#include <algorithm>
#include <cstdio>

#include "models/model.h"
#include "studio/dataset_info.h"
#include "studio/model_kinds.h"
#include "train/finetune_plan.h"

namespace studio {
namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  if (s.empty()) return "";
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string thousands(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

ModelSummary summarizeModel(const TrainConfig& config) {
  const DataPlan plan = planData(config);
  const InputShape input = inputShapeOf(plan, config.data, config.model.kind);
  const torch::Device cpu(torch::kCPU);
  std::unique_ptr<Model> model = makeModel(config.model, input, plan.outputs());
  checkModelOutput(*model, config.model, input, plan.outputs(), cpu);
  // A detector's forward pass takes boxes: its parts are listed without one.
  const bool detector = isModel(config.model.kind, ModelFamily::detector);
  const torch::Tensor sample = sampleInput(input, 2, cpu);
  ModelSummary s;
  s.model = model->description();
  s.input = shapeText(sample.sizes().vec());
  s.classNames = plan.classNames;
  for (const LayerSummary& l : model->layers(sample)) {
    if (l.name == "(output)") {
      s.output = shapeText(l.output);
      continue;
    }
    s.rows.push_back({l.name, l.type, shapeText(l.output), l.parameters, ""});
  }
  const FinetunePlan tune = planFinetune(*model, config.model, config.train.finetune);
  s.finetune = tune.active();
  if (isTorchvisionBackbone(config.model.kind) || detector) s.weights = config.model.weights;
  if (s.finetune) {
    for (auto& row : s.rows) {
      if (row.parameters == 0) continue;
      const std::string group = finetuneGroup(*model, config.model, config.train.finetune, row.name + ".weight");
      const auto it = std::find(tune.groups.begin(), tune.groups.end(), group);
      if (it == tune.groups.end()) continue;
      const size_t g = static_cast<size_t>(it - tune.groups.begin());
      const int64_t frozen = tune.trainsFromEpoch[g];  // epochs 1..frozen
      char factor[32];
      std::snprintf(factor, sizeof factor, "%.3g", tune.factors[g]);
      row.finetune = (frozen == 0   ? std::string("trains, ")
                      : frozen == 1 ? std::string("frozen in epoch 1, ")
                                    : "frozen in epochs 1-" + std::to_string(frozen) + ", ") +
                     "lr x" + factor + (g + 1 == tune.groups.size() ? " (head)" : "");
    }
  }
  s.stateTensors = static_cast<int64_t>(model->namedState().size());
  for (const auto& p : model->parameters()) s.trainableParameters += p.numel();
  s.firstEpochTrained = s.trainableParameters;
  if (s.finetune) {  // with frozen groups, epoch 1 trains only those that train from the start (the head)
    s.firstEpochTrained = 0;
    const auto named = model->namedParameters();
    for (size_t i = 0; i < named.size() && i < tune.groupOfParameter.size(); ++i)
      if (tune.trainsFromEpoch[tune.groupOfParameter[i]] == 0) s.firstEpochTrained += named[i].second.numel();
  }
  s.parameters = model->parameterCount();
  if (detector) {
    s.output = "boxes, scores and labels per image";
  } else if (s.output.empty()) {
    torch::NoGradGuard noGrad;
    model->setTraining(false);
    s.output = shapeText(model->forward(sample).sizes().vec());
  }
  return s;
}

std::string formatModelSummary(const ModelSummary& s) {
  std::string out =
      "model " + s.model + ", input " + s.input + ", " + std::to_string(s.classNames.size()) + " classes\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %-22s %-22s %14s%s\n", "layer", "type", "output", "parameters",
                s.finetune ? "  fine-tune" : "");
  out += line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-18s %-22s %-22s %14s%s%s\n", r.name.c_str(), r.type.c_str(),
                  r.output.empty() ? "-" : r.output.c_str(), thousands(r.parameters).c_str(),
                  r.finetune.empty() ? "" : "  ", r.finetune.c_str());
    out += line;
  }
  out += "output " + s.output + "\n";
  if (!s.weights.empty()) out += "starts from " + s.weights + " (model.weights)\n";
  out += "parameters: " + thousands(s.parameters) + " (" + thousands(s.trainableParameters) + " trained" +
         (s.firstEpochTrained < s.trainableParameters ? ", " + thousands(s.firstEpochTrained) + " of them in epoch 1"
                                                      : std::string()) +
         ")\n";
  return out;
}

}  // namespace studio
