// A segmentation run's export (task.kind segmentation, issue 61, item 5):
// model.safetensors with model.py (torchvision's segmenter, loaded strict),
// preprocessing.json saying how images are prepared, and its parts of the
// model card. ONNX and the studio's own check are not built for segmenters
// yet: refused, naming what is.
#include <ostream>

#include "run/export_task.h"
#include "studio/errors.h"

namespace studio {
namespace {

class MaskExport : public ExportTask {
 public:
  void refuse(const std::string& runDir, const ExportOptions& o, const nlohmann::json&) const override {
    const std::string what = "run " + runDir + " trained a segmenter (task.kind segmentation), whose export is ";
    if (!(o.format == ExportFormat::torch))
      throw InputError(what + "model.safetensors with model.py (torchvision's segmenter) for now: --format " +
                       o.format.name() + " is not built for segmenters yet");
    if (!(o.quantize == ExportQuantize::none))
      throw InputError(what + "not quantized: --quantize applies to a classifier's ONNX export");
    if (o.check)
      throw InputError(what +
                       "not checked by the studio yet: compare model.py's masks with training-studio-cli "
                       "predict's on the same images");
  }

  bool checked(const ExportOptions&) const override { return false; }

  void describe(nlohmann::json& pre, const TrainConfig& config, const nlohmann::json&,
                const ExportOptions&) const override {
    pre["base_size"] = config.model.segmenter.base_size;
    pre["ignore_index"] = config.data.ignore_index;
    pre["how"] =
        "an image as float32 [1, 3, H, W]: RGB pixels / 255, its shorter side resized to base_size "
        "(bilinear, antialiased; the longer side in proportion), then (x - mean) / std per channel with "
        "normalization's mean and std";
    pre["outputs"] =
        "\"out\": logits [1, classes, H, W] at the input's size; the arg-max over the classes is each pixel's "
        "class (classes[k]); prediction resizes the logits back to the image's own size (bilinear)";
  }

  std::string cardFiles(const CardFacts&) const override { return "`model.safetensors` with `model.py`"; }

  void cardInput(std::ostream& o, const CardFacts& c) const override {
    o << "- torchvision's `" << c.config.model.kind
      << "`: `model.py`'s build() makes it as the run built it and loads `model.safetensors` with "
         "`strict=True`.\n"
      << "- Input: images as float32 [N, 3, H, W], at any size.\n";
  }

  std::vector<std::string> cardOutput(std::ostream& o, const CardFacts& c) const override {
    o << "- Output: " << c.pre.value("outputs", std::string()) << "; the classes (mask value 0 ..): ";
    return c.pre.value("classes", std::vector<std::string>{});
  }

  std::string cardFigureName(const std::string& id) const override {
    return id == "eval_miou"             ? "Test mean IoU"
           : id == "eval_pixel_accuracy" ? "Test pixel accuracy"
           : id == "eval_dice"           ? "Test Dice (mean of classes)"
                                         : ExportTask::cardFigureName(id);
  }

  void cardUsage(std::ostream& o, const CardFacts&, size_t) const override {
    o << "## How to run it\n\n"
      << "PyTorch (torchvision), on `x`, an image prepared as `preprocessing.json` says:\n\n"
      << "```python\nfrom model import build\nmodel = build()\nclasses = model(x)[\"out\"].argmax(1)  # [1, H, W]: "
         "a class per pixel\n```\n\n"
      << "`training-studio-cli predict` reads this folder too, and writes each image's mask as an index PNG.\n\n";
  }
};

}  // namespace

const ExportTask& maskExportTask() {
  static const MaskExport task;
  return task;
}

}  // namespace studio
