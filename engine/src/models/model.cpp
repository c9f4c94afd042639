#include "models/model.h"
#include "models/detector_model.h"
#include "models/segmenter_model.h"

#include "models/builtin_model.h"
#include "models/torchscript_model.h"
#include "models/torchvision_model.h"
#include "studio/errors.h"
#include "studio/model_kinds.h"

namespace studio {

void Model::toChannelsLast() {
  torch::NoGradGuard noGrad;
  for (auto& p : parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
}

std::string Model::checkpointActivations(int64_t) {
  throw InputError("memory.activation_checkpointing works on the built-in models (mlp, cnn, resnet), not on " +
                   description() + "; set it to off");
}

torch::Tensor sampleInput(const InputShape& input, int64_t n, const torch::Device& device) {
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  if (input.features > 0) return torch::zeros({n, input.features}, opts);
  return torch::zeros({n, input.channels, input.height, input.width}, opts);
}

torch::Tensor Model::forwardWithStage(const torch::Tensor&, torch::Tensor&, std::string&) {
  throw ModelError(description() +
                   " has no convolutional stage the studio knows of: Grad-CAM explains the built-in "
                   "cnn and resnet models");
}

std::string Model::layerGroup(const std::string& parameter) const { return parameter.substr(0, parameter.find('.')); }

namespace {
[[noreturn]] void detectsNoBoxes(const Model& model) {
  throw std::logic_error(model.description() + " detects no boxes: task.kind detection needs a detector model.kind");
}
}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> Model::boxLosses(const std::vector<torch::Tensor>&,
                                                                    const std::vector<torch::Tensor>&,
                                                                    const std::vector<torch::Tensor>&,
                                                                    const std::vector<torch::Tensor>&) {
  detectsNoBoxes(*this);
}

std::vector<detection::Detections> Model::detectBoxes(const std::vector<torch::Tensor>&) { detectsNoBoxes(*this); }

const detection::RcnnTransformOptions& Model::boxPlacement() const { detectsNoBoxes(*this); }

std::pair<torch::Tensor, torch::Tensor> Model::segmentPixels(const torch::Tensor&) {
  throw std::logic_error(description() +
                         " gives no class per pixel: task.kind segmentation needs a segmenter model.kind");
}

std::unique_ptr<Model> makeModel(const ModelConfig& config, const InputShape& input, int64_t classes) {
  if (isModel(config.kind, ModelFamily::torchscript)) return std::make_unique<TorchScriptModel>(config.path);
  if (isTorchvisionBackbone(config.kind)) return std::make_unique<TorchvisionModel>(config.kind, input, classes);
  if (isModel(config.kind, ModelFamily::detector)) return std::make_unique<DetectorModel>(config, classes);
  if (isModel(config.kind, ModelFamily::segmenter)) return std::make_unique<SegmenterModel>(config, classes);
  return std::make_unique<BuiltinModel>(config, input, classes);
}

void checkModelOutput(Model& model, const ModelConfig& config, const InputShape& input, int64_t classes,
                      const torch::Device& device) {
  // A detector's forward pass takes its images' boxes: there is no batch of
  // logits to probe (its losses and boxes are checked against torchvision's).
  // A segmenter gives logits per pixel, its shapes checked against torchvision's.
  if (isModel(config.kind, ModelFamily::detector) || isModel(config.kind, ModelFamily::segmenter)) return;
  const torch::Tensor x = sampleInput(input, 2, device);
  const std::string shape = "[2, " +
                            (input.features > 0 ? std::to_string(input.features)
                                                : std::to_string(input.channels) + ", " + std::to_string(input.height) +
                                                      ", " + std::to_string(input.width)) +
                            "]";
  const std::string what = isModel(config.kind, ModelFamily::torchscript) ? "the TorchScript model " + config.path
                                                                          : "model.kind " + config.kind;
  torch::Tensor y;
  model.setTraining(false);
  try {
    torch::NoGradGuard noGrad;
    y = model.forward(x);
  } catch (const ModelError&) {
    model.setTraining(true);
    throw;
  } catch (const c10::OutOfMemoryError&) {
    model.setTraining(true);
    throw;  // the memory is full, not the model wrong
  } catch (const std::exception& e) {
    model.setTraining(true);
    const c10::Error* ce = dynamic_cast<const c10::Error*>(&e);
    throw ModelError(what + " fails on a batch of the data's shape " + shape + ": " +
                     (ce ? ce->what_without_backtrace() : e.what()));
  }
  model.setTraining(true);
  if (y.dim() != 2 || y.size(0) != 2 || y.size(1) != classes)
    throw ModelError(what + " gives output of shape " + c10::str(y.sizes()) + " for input " + shape +
                     "; it must give [2, " + std::to_string(classes) + "]: one logit per class (" +
                     std::to_string(classes) + " classes in the data)");
  if (!y.is_floating_point())
    throw ModelError(what + " gives " + std::string(c10::toString(y.scalar_type())) +
                     " output; it must give floating-point logits");
}

}  // namespace studio
