// A segmentation run's export (task.kind segmentation, issue 61, item 5):
// model.safetensors with model.py (torchvision's segmenter, loaded strict),
// preprocessing.json saying how images are prepared, and its parts of the
// model card; with --format onnx, model.onnx (any batch, height and width)
// checked in ONNX Runtime against the studio's logits, as with --check the
// PyTorch files are, on test images cut square to base_size. Quantizing is
// a classifier's: refused, naming what is built.
#include <algorithm>
#include <ostream>

#include "data/augment.h"
#include "data/batch_loader.h"
#include "data/mask_data.h"
#include "run/export_check.h"
#include "run/export_task.h"
#include "studio/errors.h"
#include "studio/run_layout.h"

namespace studio {
namespace {

// The check's logits kept under this (they are classes x base_size² floats an image).
constexpr int64_t kMostParityBytes = int64_t{64} << 20;
constexpr int64_t kMostParityImages = 8;

class MaskExport : public ExportTask {
 public:
  void refuse(const std::string& runDir, const ExportOptions& o, const nlohmann::json&) const override {
    if (!(o.quantize == ExportQuantize::none))
      throw InputError("run " + runDir +
                       " trained a segmenter (task.kind segmentation), whose export is not quantized: --quantize "
                       "applies to a classifier's ONNX export; export with --format onnx alone");
  }

  bool checked(const ExportOptions& o) const override { return o.format == ExportFormat::onnx || o.check; }

  // parity_x: up to 8 test images (fewer where their logits pass 64 MiB),
  // each one's centre square resized to base_size (uint8 [N, 3, B, B]);
  // studio_outputs: the model's "out" logits on them [N, classes, B, B].
  CheckExamples writeExamples(const TrainConfig& cfg, const nlohmann::json& info, Model& model, const ExportOptions& o,
                              const std::string& file) const override {
    const CheckData loaded = loadCheckData(cfg);
    const int64_t base = cfg.model.segmenter.base_size;
    const auto classes = std::max<int64_t>(1, loaded.data.numClasses());
    const int64_t most = std::clamp<int64_t>(kMostParityBytes / (classes * base * base * 4), 1, kMostParityImages);
    const Examples picked = spreadExamples(*loaded.source, std::min(o.parityExamples, most));
    std::vector<torch::Tensor> squares;
    for (const MaskedRow& row : unpackMaskedBatch(picked.x.cpu(), picked.y)) {
      const int64_t h = row.image.size(1), w = row.image.size(2), side = std::min(h, w);
      squares.push_back(resizedCropPixels(row.image, (h - side) / 2, (w - side) / 2, side, side, base, base));
    }
    const torch::Tensor x = torch::stack(squares).contiguous();
    LoaderOptions t;
    t.norm = Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()),
                                     /*image=*/true, 3, torch::kCPU);
    writeExamplesFile(file, {{"parity_x", x}, {"studio_outputs", studioOutputs(model, x, t)}}, loaded.facts);
    return loaded.facts;
  }

  void describe(nlohmann::json& pre, const TrainConfig& config, const nlohmann::json&,
                const ExportOptions& options) const override {
    pre["base_size"] = config.model.segmenter.base_size;
    pre["ignore_index"] = config.data.ignore_index;
    pre["how"] =
        "an image as float32 [1, 3, H, W]: RGB pixels / 255, its shorter side resized to base_size "
        "(bilinear, antialiased; the longer side in proportion), then (x - mean) / std per channel with "
        "normalization's mean and std";
    pre["outputs"] =
        "\"out\": logits [1, classes, H, W] at the input's size; the arg-max over the classes is each pixel's "
        "class (classes[k]); prediction resizes the logits back to the image's own size (bilinear)";
    if (options.format == ExportFormat::onnx)
      pre["onnx"] = {{"file", "model.onnx"},
                     {"input", "input"},
                     {"output", "logits"},
                     {"meaning",
                      "torchvision's \"out\": a logit per class and pixel [N, classes, H, W] at the input's size, in "
                      "the order of \"classes\"; the arg-max over axis 1 is each pixel's class"},
                     {"batch_axis", "dynamic (axis 0 of input and output)"},
                     {"spatial_axes", "dynamic (axes 2 and 3, height and width, of input and output)"}};
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

  void cardUsage(std::ostream& o, const CardFacts& c, size_t) const override {
    o << "## How to run it\n\n"
      << "PyTorch (torchvision), on `x`, an image prepared as `preprocessing.json` says:\n\n"
      << "```python\nfrom model import build\nmodel = build()\nclasses = model(x)[\"out\"].argmax(1)  # [1, H, W]: "
         "a class per pixel\n```\n\n";
    if (c.exported.contains("onnx"))
      o << "ONNX Runtime (Python), on the same `x` as a NumPy array, at any height and width:\n\n"
        << "```python\nimport onnxruntime as ort\nsession = ort.InferenceSession(\"model.onnx\", "
           "providers=[\"CPUExecutionProvider\"])\nclasses = session.run(None, {\"input\": x})[0].argmax(1)  # "
           "[1, H, W]\n```\n\n";
    o << "`training-studio-cli predict` reads this folder too, and writes each image's mask as an index PNG.\n\n";
  }
};

}  // namespace

const ExportTask& maskExportTask() {
  static const MaskExport task;
  return task;
}

}  // namespace studio
