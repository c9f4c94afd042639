#pragma once
// model.kind's values, from one registry: the studio's own models and a
// TorchScript file by name (ModelFamily's names), then torchvision's
// classifiers (torchvisionBackbones()). Code asks for a family, never
// compares the kind with a spelt-out name. Torch-free.
// Thread: immutable data, any thread.

#include <optional>
#include <string>
#include <vector>

#include "studio/train_config.h"

namespace studio {

STUDIO_CHOICE(ModelFamily, mlp, cnn, resnet, torchscript, torchvision, detector)

// The family of a model.kind; none for a name that is no model's
// (validate() names it with the list).
std::optional<ModelFamily> modelFamily(const std::string& kind);
inline bool isModel(const std::string& kind, ModelFamily family) { return modelFamily(kind) == family; }
// mlp, cnn or resnet: the studio's own layers (width, depth, activation
// checkpointing, synchronised BatchNorm).
bool isBuiltinModel(const std::string& kind);
// Every model.kind in the form's order: the families' names but
// torchvision, then torchvision's classifiers.
const std::vector<std::string>& modelKinds();
// model.kind values that are torchvision's detectors (task.kind detection).
const std::vector<std::string>& detectorKinds();
// "fasterrcnn_mobilenet_v3_large_320_fpn, fasterrcnn_mobilenet_v3_large_fpn": for messages.
std::string detectorKindsText();

}  // namespace studio
