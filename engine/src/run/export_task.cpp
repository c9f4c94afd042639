// Each task's part of an export (run/export_task.h).
#include "run/export_task.h"

#include <map>

#include "run/card_snippets.h"
#include "run/export_check.h"
#include "run/run_recorder.h"
#include "studio/dataset_info.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/run_layout.h"
#include "studio/studio_python.h"

namespace studio {

CheckExamples ExportTask::writeExamples(const TrainConfig& config, const nlohmann::json& runInfo, Model& model,
                                        const ExportOptions& options, const std::string& file) const {
  return writeCheckExamples(config, runInfo, model, options, file);
}

namespace {

// The ONNX model's input and output, named (preprocessing.json's "onnx").
nlohmann::json onnxFacts(const TrainConfig& cfg) {
  const bool values = cfg.task.kind == TaskKind::regression;
  const char* meaning = values ? "standardised values: y = values * std + mean, as \"outputs\" says"
                        : cfg.task.kind == TaskKind::multilabel
                            ? "a logit per label: p = sigmoid(logits), as \"outputs\" says"
                            : "a logit per class, in the order of \"classes\": softmax(logits) are the probabilities";
  return {{"file", "model.onnx"},
          {"input", "input"},
          {"output", values ? "values" : "logits"},
          {"meaning", meaning},
          {"batch_axis", "dynamic (axis 0 of input and output)"}};
}

// What "how" needs besides, to give the studio's inputs exactly.
constexpr const char* kExactly =
    "A JPEG at least twice the resized size is decoded at a reduced DCT scale (1/2, 1/4 or 1/8, as Pillow's "
    "Image.draft picks it), and a resized image is rounded to 8-bit pixels before it is normalised; "
    "preprocess.py does all of it";

// A classifier's examples per class: the training split's and the test
// split's when the export loaded the data, else the test report's.
void classCounts(std::ostream& o, const CardFacts& c) {
  const auto classes = c.runInfo.value(run_files::run_info::kClasses, std::vector<std::string>{});
  if (classes.empty()) return;
  const CheckExamples* d = c.data;
  const bool train = d && d->trainCounts.size() == classes.size();
  std::vector<int64_t> testCounts;
  if (d && d->testCounts.size() == classes.size())
    testCounts = d->testCounts;
  else if (c.report.contains("confusion"))
    for (const auto& row : c.report["confusion"]) {
      int64_t n = 0;
      for (const auto& count : row) n += count.get<int64_t>();
      testCounts.push_back(n);
    }
  o << "\n| class | training examples | test examples |\n| --- | ---: | ---: |\n";
  for (size_t i = 0; i < classes.size(); ++i)
    o << "| " << classes[i] << " | " << (train ? std::to_string(d->trainCounts[i]) : "-") << " | "
      << (i < testCounts.size() ? std::to_string(testCounts[i]) : "-") << " |\n";
}

// A model that answers a tensor per batch (classification, regression,
// multi-label): its files may be checked against the studio's outputs in
// Python, and written as ONNX (and INT8).
class TensorExport : public ExportTask {
 public:
  bool checked(const ExportOptions& o) const override { return o.format == ExportFormat::onnx || o.check; }

  void describe(nlohmann::json& pre, const TrainConfig& cfg, const nlohmann::json& info,
                const ExportOptions& options) const override {
    const InputShape input = inputShapeFromRunInfo(info);
    if (pre.contains("targets"))
      pre["outputs"] = cfg.task.kind == TaskKind::multilabel
                           ? "p = sigmoid(model(x)), label by label in the order of \"targets\".names; a label is "
                             "predicted when p >= its \"targets\".thresholds entry"
                           : "y = model(x) * std + mean, target by target, in the order of \"targets\".names";
    if (input.features > 0) {
      pre["how"] = "x = (features - mean) / std, feature by feature, in the order of \"features\"";
    } else if (const StoredShape stored = storedShapeFromRunInfo(info); stored.larger(input)) {
      pre["how"] =
          "x = (pixels / 255 - mean[c]) / std[c] per channel, images as [N, C, H, W] float32 of "
          "input_shape: each image resized (antialiased bilinear, its aspect kept) to cover " +
          std::to_string(stored.height) + "x" + std::to_string(stored.width) +
          " (its shorter side to \"resize\"), the centre cut to that, then its centre to the input's "
          "\"center_crop\" (torchvision: Resize(resize) then CenterCrop(center_crop)); gray from colour "
          "with ITU-R 601-2 luma. " +
          std::string(kExactly);
    } else {
      pre["how"] =
          "x = (pixels / 255 - mean[c]) / std[c] per channel, images as [N, C, H, W] float32 of input_shape "
          "(resized with antialiased bilinear interpolation; gray from colour with ITU-R 601-2 luma). " +
          std::string(kExactly);
    }
    if (options.format == ExportFormat::onnx) pre["onnx"] = onnxFacts(cfg);
  }

  // An image model's preprocess.py: the studio's own input tensors from
  // image files, following preprocessing.json (issue 60, item 11: "how"
  // alone missed the reduced-scale JPEG decode and the 8-bit rounding).
  void writeFiles(const nlohmann::json& pre,
                  const std::function<void(const std::string&, const std::string&)>& write) const override {
    if (pre.value("input", std::string()) == "image")
      write(run_files::kPreprocessScript,
            readFileBytes(studioScript("export/preprocess.py", nullptr), "the studio's preprocess.py"));
  }

  std::string cardFiles(const CardFacts& c) const override {
    return c.torchscript ? "`model.ts` (TorchScript)" : "`model.safetensors` with `model.py`, `model.pt`";
  }

  void cardInput(std::ostream& o, const CardFacts& c) const override {
    const auto shape = c.runInfo.value(run_files::run_info::kInput, nlohmann::json::object());
    if (table(c))
      o << "- Input: a table row of " << shape.value("features", 0) << " features, float32 [N, "
        << shape.value("features", 0) << "].\n";
    else
      o << "- Input: an image, float32 [N, " << shape.value("channels", 0) << ", " << shape.value("height", 0) << ", "
        << shape.value("width", 0) << "].\n";
  }

  std::vector<std::string> cardOutput(std::ostream& o, const CardFacts& c) const override {
    if (c.config.task.kind == TaskKind::classification) {
      const auto classes = c.runInfo.value(run_files::run_info::kClasses, std::vector<std::string>{});
      o << "- Output `" << output(c) << "`: a logit per class, " << classes.size() << " classes in this order: ";
      return classes;
    }
    o << "- Output `" << output(c) << "`: " << c.pre.value("outputs", std::string()) << "; the "
      << (c.config.task.kind == TaskKind::regression ? "targets" : "labels") << ": ";
    return c.pre.value("targets", nlohmann::json::object()).value("names", std::vector<std::string>{});
  }

  void cardData(std::ostream& o, const CardFacts& c) const override {
    if (c.config.task.kind == TaskKind::classification) classCounts(o, c);
  }

  void cardUsage(std::ostream& o, const CardFacts& c, size_t outputs) const override {
    tensorSnippets(o, c.torchscript, c.exported.contains("onnx"), output(c), table(c),
                   c.runInfo.value(run_files::run_info::kInput, nlohmann::json::object()), outputs);
  }

 private:
  static bool table(const CardFacts& c) { return c.pre.value("input", std::string()) == "table"; }
  // The model's output: model.onnx's name for it, else what it is.
  static std::string output(const CardFacts& c) {
    if (c.exported.contains("onnx")) return c.exported["onnx"].value("output", std::string("logits"));
    return c.config.task.kind == TaskKind::regression ? "values" : "logits";
  }
};

// A detector: model.safetensors under torchvision's names with model.py,
// which builds torchvision's detector as the run built it; it takes a list
// of images and answers boxes, so no ONNX or tensor check yet.
class BoxExport : public ExportTask {
 public:
  void refuse(const std::string& runDir, const ExportOptions& o, const nlohmann::json& info) const override {
    const std::string what = "run " + runDir + " trained a detector, whose export is ";
    if (!(o.format == ExportFormat::torch))
      throw InputError(what + "model.safetensors with model.py (torchvision's detector) for now: --format " +
                       o.format.name() + " is not built for detectors yet");
    if (!(o.quantize == ExportQuantize::none))
      throw InputError(what + "not quantized: --quantize applies to a classifier's ONNX export");
    if (o.check)
      throw InputError(what +
                       "not checked by the studio yet: --check compares a classifier's or regression's "
                       "outputs; compare model.py's boxes with training-studio-cli predict's on the same images");
    readRunCategories(runDir, info);  // predict and the card speak the annotations' ids
  }

  bool checked(const ExportOptions&) const override { return false; }

  void describe(nlohmann::json& pre, const TrainConfig& config, const nlohmann::json&,
                const ExportOptions&) const override {
    pre["how"] =
        "images as a list of float32 [3, H, W] tensors, RGB pixels / 255, each at its own size: the model resizes "
        "each (its shorter side to min_size, its longer at most max_size) and normalises it itself";
    pre["outputs"] =
        "per image, boxes (x1, y1, x2, y2 in the image's pixels), labels (1 .. classes: label k is classes[k - 1], "
        "categories[k - 1] in the annotations) and scores, by score, after NMS per class";
    if (config.task.kind == TaskKind::instance_segmentation)
      pre["outputs"] = pre["outputs"].get<std::string>() +
                       "; and masks, N x 1 x H x W probabilities in the image's pixels (above 0.5: the object's)";
  }

  std::string cardFiles(const CardFacts&) const override { return "`model.safetensors` with `model.py`"; }

  void cardInput(std::ostream& o, const CardFacts& c) const override {
    o << "- torchvision's `" << c.config.model.kind
      << "`: `model.py`'s build() makes it as the run built it and loads `model.safetensors` with "
         "`strict=True`.\n"
      << "- Input: a list of images, float32 [3, H, W] each, at their own sizes.\n";
  }

  // Its classes with their annotations' ids.
  std::vector<std::string> cardOutput(std::ostream& o, const CardFacts& c) const override {
    o << "- Output: " << c.pre.value("outputs", std::string()) << "; the classes (label 1 ..): ";
    std::vector<std::string> names;
    for (const auto& category : c.pre.value("categories", nlohmann::json::array()))
      names.push_back(category.value("name", std::string()) + " (id " + std::to_string(category.value("id", 0)) + ")");
    return names;
  }

  std::string cardFigureName(const std::string& id) const override {
    return id == "eval_map"          ? "Test mAP@[.50:.95] (COCO's)"
           : id == "eval_mask_map"   ? "Test mask mAP@[.50:.95] (COCO's segm)"
           : id == "eval_mask_map50" ? "Test mask AP50"
                                     : ExportTask::cardFigureName(id);
  }

  void cardUsage(std::ostream& o, const CardFacts& c, size_t) const override {
    o << "## How to run it\n\n"
      << "PyTorch (torchvision), on `image`, an image read as `preprocessing.json` says:\n\n"
      << "```python\nfrom model import build\nmodel = build()\nfound = model([image])[0]  # image: float32 [3, H, "
         "W], RGB pixels / 255\nfound[\"boxes\"], found[\"labels\"], found[\"scores\"]\n"
      << (c.config.task.kind == TaskKind::instance_segmentation
              ? "found[\"masks\"] > 0.5  # each box's object: N x 1 x H x W\n"
              : "")
      << "```\n\n"
      << "`training-studio-cli predict` reads this folder too.\n\n";
  }
};

}  // namespace

std::string ExportTask::cardFigureName(const std::string& id) const {
  static const std::map<std::string, std::string, std::less<>> names{
      {"eval_accuracy", "Test accuracy"}, {"eval_loss", "Test loss"},  {"eval_r2", "Test R²"},
      {"eval_rmse", "Test RMSE"},         {"eval_mae", "Test MAE"},    {"eval_map", "Test mAP"},
      {"eval_map50", "Test AP50"},        {"eval_map75", "Test AP75"}, {"eval_f1", "Test F1"}};
  const auto it = names.find(id);
  return it != names.end() ? it->second : "Test " + id;
}

const ExportTask& exportTask(TaskKind kind) {
  static const TensorExport tensors;
  static const BoxExport boxes;
  if (boxesTask(kind)) return boxes;
  if (kind == TaskKind::segmentation) return maskExportTask();
  return tensors;
}

std::vector<BoxCategory> readRunCategories(const std::string& runDir, const nlohmann::json& info) {
  const auto it = info.find(run_files::run_info::kCategories);
  if (it == info.end() || !it->is_array())
    throw InputError("run " + runDir + " does not record its categories' ids (settings.json's run_info.categories): " +
                     "an earlier Training Studio trained it; train it again with this one");
  std::vector<BoxCategory> out;
  try {
    for (const auto& e : *it) out.push_back({e.at("id").get<int64_t>(), e.at("name").get<std::string>()});
  } catch (const nlohmann::json::exception&) {
    throw InputError("run " + runDir + "'s settings.json: run_info.categories must be a list of {\"id\": a whole " +
                     "number, \"name\": text} (it was edited)");
  }
  return out;
}

}  // namespace studio
