// model.kind's registry (studio/model_kinds.h). Torch-free.
#include "studio/model_kinds.h"

namespace studio {

std::optional<ModelFamily> modelFamily(const std::string& kind) {
  if (isTorchvisionBackbone(kind)) return ModelFamily::torchvision;
  for (std::size_t i = 0; i < kModelFamilyNames.size(); ++i)
    if (kModelFamilyNames[i] == kind && static_cast<ModelFamily>(i) != ModelFamily::torchvision)
      return static_cast<ModelFamily>(i);
  return std::nullopt;
}

bool isBuiltinModel(const std::string& kind) {
  const auto f = modelFamily(kind);
  return f == ModelFamily::mlp || f == ModelFamily::cnn || f == ModelFamily::resnet;
}

const std::vector<std::string>& modelKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const auto name : kModelFamilyNames)
      if (name != nameOf(ModelFamily::torchvision)) k.emplace_back(name);
    for (const auto& b : torchvisionBackbones()) k.push_back(b);
    return k;
  }();
  return kinds;
}

}  // namespace studio
