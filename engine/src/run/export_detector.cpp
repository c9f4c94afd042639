// exportDetector (run/export_detector.h).
#include "run/export_detector.h"

#include <filesystem>
#include <sstream>

#include "models/detector_model.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/run_layout.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

void refuseWhatIsNotBuilt(const std::string& runDir, const ExportOptions& o) {
  const std::string what = "run " + runDir + " trained a detector (task.kind detection), whose export is ";
  if (o.format != "torch")
    throw InputError(what + "model.safetensors with model.py (torchvision's detector) for now: --format " + o.format +
                     " is not built for detectors yet");
  if (o.quantize != "none") throw InputError(what + "not quantized: --quantize applies to a classifier's ONNX export");
  if (o.check)
    throw InputError(what +
                     "not checked by the studio yet: --check compares a classifier's or regression's "
                     "outputs; compare model.py's boxes with training-studio-cli predict's on the same images");
}

std::string figure(const nlohmann::json& summary, const char* key) {
  if (!summary.contains(key) || !summary[key].is_number()) return "-";
  std::ostringstream o;
  o.precision(4);
  o << summary[key].get<double>();
  return o.str();
}

// README.md: what the detector is, how to call it, what it was trained on
// and how it did.
std::string detectorCard(const std::string& runDir, const TrainConfig& cfg, const nlohmann::json& info,
                         const nlohmann::json& pre, Model& model, const std::string& weights,
                         const nlohmann::json& summary) {
  const nlohmann::json data = info.value("data", nlohmann::json::object());
  std::ostringstream o;
  o << "# " << cfg.name << ": a detector trained with Training Studio\n\n"
    << "Exported by Training Studio " << STUDIO_VERSION << " from the run `" << fs::path(runDir).filename().string()
    << "` (its " << weights << " weights). The files: `model.safetensors` with `model.py`, which builds torchvision's `"
    << cfg.model.kind << "` and loads them with `strict=True`; `preprocessing.json` says what it answers; "
    << "`checkpoint.ckpt` resumes it in the studio (and `training-studio-cli predict` reads this folder).\n\n"
    << "## Use it\n\n"
    << "```python\nfrom model import build\nmodel = build()\nfound = model([image])[0]  # image: float32 [3, H, W], "
       "RGB pixels / 255\nfound[\"boxes\"], found[\"labels\"], found[\"scores\"]\n```\n\n"
    << "- " << pre.value("how", std::string()) << ".\n- " << pre.value("outputs", std::string()) << ".\n"
    << "- Architecture: " << model.description() << ", " << model.parameterCount() << " parameters.\n"
    << "- Classes (label 1 ..): ";
  const auto& categories = pre.at("categories");
  for (size_t i = 0; i < categories.size(); ++i)
    o << (i ? ", " : "") << categories[i].value("name", std::string()) << " (id " << categories[i].value("id", 0)
      << ")";
  o << ".\n\n## What it was trained on\n\n"
    << "- Images from `" << data.value("train_from", std::string("?")) << "`: " << data.value("train", 0)
    << " training, " << data.value("validation", 0) << " validation, " << data.value("test", 0) << " test (`"
    << data.value("test_from", std::string("?")) << "`).\n\n## How it did\n\n"
    << "COCO's figures on the test images: mAP@[.50:.95] " << figure(summary, "test_map") << ", AP50 "
    << figure(summary, "test_map50") << ", AP75 " << figure(summary, "test_map75") << ".\n";
  return o.str();
}

}  // namespace

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

ExportResult exportDetector(const std::string& runDir, const std::string& outDir, const ExportOptions& options,
                            const TrainConfig& cfg) {
  refuseWhatIsNotBuilt(runDir, options);
  const nlohmann::json info = readRunInfo(runDir);
  readRunCategories(runDir, info);  // refused here when the run does not record them
  ExportResult result;
  const RunCheckpoint chosen = runCheckpoint(runDir, options.which);
  result.checkpoint = chosen.which;
  if (chosen.fellBack) result.note = std::string(kNoBestCheckpoint) + ", so the last one was exported";
  std::unique_ptr<Model> model = makeModel(cfg.model, inputShapeFromRunInfo(info), outputsFromRunInfo(info));
  loadModelWeights(chosen.path, *model, /*ema=*/options.which == "ema");
  prepareExportFolder(outDir);
  for (const auto& f : model->exportTo(outDir)) result.files.push_back(f);
  auto write = [&](const std::string& name, const std::string& bytes) {
    writeFileAtomically(outDir + "/" + name, bytes);
    result.files.push_back(outDir + "/" + name);
  };
  nlohmann::json pre = {
      {"format", run_files::kExportFormat}, {"studio_version", STUDIO_VERSION}, {"weights", result.checkpoint}};
  pre.update(preprocessingFacts(runDir, cfg, info));
  pre["how"] =
      "images as a list of float32 [3, H, W] tensors, RGB pixels / 255, each at its own size: the model resizes "
      "each (its shorter side to min_size, its longer at most max_size) and normalises it itself";
  pre["outputs"] =
      "per image, boxes (x1, y1, x2, y2 in the image's pixels), labels (1 .. classes: label k is classes[k - 1], "
      "categories[k - 1] in the annotations) and scores, by score, after NMS per class";
  // The detector's settings as it was built (model.detector.*, or the kind's defaults).
  const auto& o = dynamic_cast<DetectorModel&>(*model).detector().options();
  const detection::PostProcess last = o.postProcess();
  pre["detector"] = {{"kind", o.kind},
                     {"min_size", o.transform.minSizes},
                     {"max_size", o.transform.maxSize},
                     {"score_threshold", last.scoreThresh},
                     {"nms_iou", last.nms},
                     {"detections_per_image", last.detectionsPerImage}};
  write(run_files::kPreprocessing, pre.dump(2) + "\n");
  write(run_files::kExportedCheckpoint, readFileBytes(chosen.path, "checkpoint"));
  copyRunRecords(runDir, outDir, write);
  nlohmann::json summary = nlohmann::json::object();
  if (fs::is_regular_file(runDir + "/" + run_files::kSummary))
    summary = nlohmann::json::parse(readFileBytes(runDir + "/" + run_files::kSummary, "summary"), nullptr, false);
  write("README.md", detectorCard(runDir, cfg, info, pre, *model, result.checkpoint, summary));
  return result;
}

}  // namespace studio
