#include "run/model_card.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/model.h"
#include "run/export_task.h"
#include "studio/metric_catalog.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string number(double v, const char* format = "%.4g") {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

std::string percent(double v) { return number(v * 100, "%.2f") + " %"; }

// The last evaluation of the test split (eval/step-N.json, the largest N).
nlohmann::json lastTestReport(const std::string& dir) {
  nlohmann::json best = nlohmann::json::object();
  int64_t bestStep = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/" + run_files::kEvalFolder, ec)) {
    if (e.path().extension() != ".json") continue;
    const auto j = readJson(e.path().string());
    const int64_t step = j.value("step", int64_t{-1});
    if (j.value("split", std::string()) == "test" && step > bestStep) best = j, bestStep = step;
  }
  return best;
}

// The date the run started, from its log's first line ("[YYYY-MM-DD ...").
std::string runDate(const std::string& dir) {
  std::ifstream in(dir + "/" + run_files::kLog);
  std::string line;
  if (std::getline(in, line) && line.size() > 11 && line[0] == '[') return line.substr(1, 10);
  return "unknown";
}

std::string setting(const nlohmann::json& s, const char* section, const char* key) {
  if (!s.contains(section) || !s[section].is_object() || !s[section].contains(key)) return "-";
  const auto& v = s[section][key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string modelCard(const ModelCardFacts& f) {
  const RunSummary summary = readSummaryFile(f.outDir).summary;
  const nlohmann::json pre = readJson(f.outDir + "/" + run_files::kPreprocessing);
  const nlohmann::json exported = readJson(f.outDir + "/export.json");
  const nlohmann::json report = lastTestReport(f.outDir);
  const nlohmann::json settings = toJson(f.config);
  const nlohmann::json data = f.runInfo.value("data", nlohmann::json::object());
  const std::string task = f.config.task.kind.name();
  const ExportTask& parts = exportTask(f.config.task.kind.value());
  const CardFacts facts{
      f.config, pre, exported, f.runInfo, report, f.data, fs::exists(f.outDir + "/" + run_files::kExportedTorchScript)};
  const bool onnx = exported.contains("onnx");
  std::ostringstream o;

  o << "# " << f.config.name << ": a " << task << " model trained with Training Studio\n\n"
    << "Exported by Training Studio " << STUDIO_VERSION << " from the run `" << fs::path(f.runDir).filename().string()
    << "` (its " << f.weights << " weights). The files: " << parts.cardFiles(facts) << (onnx ? ", `model.onnx`" : "")
    << (exported.contains("int8") ? ", `model.int8.onnx`" : "") << "; `preprocessing.json` says how to feed it"
    << (fs::exists(f.outDir + "/" + run_files::kPreprocessScript) ? ", and `preprocess.py` does it" : "")
    << "; `checkpoint.ckpt` resumes it in the studio.\n\n";

  o << "## What it is\n\n"
    << "- Architecture: " << f.model.description() << ", " << f.model.parameterCount() << " parameters.\n";
  parts.cardInput(o, facts);
  o << "- Preprocessing: " << pre.value("how", std::string("as preprocessing.json says")) << ".\n";
  const std::vector<std::string> names = parts.cardOutput(o, facts);
  for (size_t i = 0; i < names.size(); ++i) o << (i ? ", " : "") << names[i];
  o << ".\n\n";

  o << "## What it was trained on\n\n"
    << "- Data: " << data.value("format", std::string("?")) << " from `" << data.value("train_from", std::string("?"))
    << "`; tested on `" << data.value("test_from", std::string("?")) << "`.\n"
    << "- Examples: " << data.value("train", 0) << " training, " << data.value("validation", 0) << " validation ("
    << data.value("validation_from", std::string("none")) << "), " << data.value("test", 0) << " test"
    << (fs::exists(f.outDir + "/" + run_files::kSplits) ? " (`splits.csv` names the validation and test examples)" : "")
    << ".\n";
  if (const auto c = data.value("corrections", nlohmann::json::object()); !c.empty())
    o << "- Corrected by `" << c.value("file", std::string("?")) << "` (data.corrections): " << c.value("removed", 0)
      << " files removed, " << c.value("relabelled", 0) << " relabelled; the files themselves are unchanged.\n";
  parts.cardData(o, facts);
  o << "\n";

  o << "## How it did\n\n";
  // Accuracy as a percentage, the others as numbers.
  auto figure = [&](const Figures& figures, const std::string& id, const std::string& name) {
    if (figures.has(id))
      o << "- " << name << ": " << (id == "eval_accuracy" ? percent(figures[id]) : number(figures[id])) << "\n";
  };
  for (const std::string& id : taskTestFigures(f.config.task.kind.value()))
    figure(summary.test.figures, id, parts.cardFigureName(id));
  figure(summary.bestEval, "eval_accuracy", "Best validation accuracy");
  std::vector<std::pair<double, std::string>> weak;
  if (report.contains("per_class"))
    for (const auto& c : report["per_class"])
      if (c.contains("f1") && c["f1"].is_number())
        weak.emplace_back(c["f1"].get<double>(), c.value("class", std::string()));
  std::sort(weak.begin(), weak.end());
  if (!weak.empty()) {
    o << "- Per class (test, step " << report.value("step", 0) << "): F1 from " << number(weak.front().first, "%.3f")
      << " (" << weak.front().second << ") to " << number(weak.back().first, "%.3f") << " (" << weak.back().second
      << "); `eval/` holds the confusion matrix and each class's figures.\n";
  }
  if (exported.contains("checks"))
    for (const auto& c : exported["checks"])
      o << "- `" << c.value("file", std::string()) << "` answers as the studio does ("
        << c.value("loaded_with", std::string()) << "): largest difference "
        << number(c.value("largest_difference", 0.0), "%.3g") << " on " << c.value("examples", 0) << " examples"
        << (c.value("passed", false) ? "" : ", **over the tolerance**") << ".\n";
  if (exported.contains("int8")) {
    const auto& q = exported["int8"];
    const bool r2 = q.value("figure", std::string()) == "r2";
    auto show = [&](double v) { return r2 ? number(v, "%.4f") : percent(v); };
    o << "- INT8 (`model.int8.onnx`, " << q.value("calibration", std::string()) << " calibration on "
      << q.value("calibration_examples", 0) << " training examples): " << q.value("figure", std::string()) << " "
      << show(q.value("fp32", 0.0)) << " in fp32, " << show(q.value("int8", 0.0)) << " in int8 on "
      << q.value("examples", 0) << " " << q.value("split", std::string("test"))
      << " examples; on the CPU in ONNX Runtime batch 1 takes "
      << number(q["speed_fp32"].value("batch1_latency_ms", 0.0), "%.3f") << " ms in fp32 and "
      << number(q["speed_int8"].value("batch1_latency_ms", 0.0), "%.3f") << " ms in int8 ("
      << number(q.value("speedup_batch1", 0.0), "%.2f") << "x; " << number(q.value("speedup_batch32", 0.0), "%.2f")
      << "x at batch 32).\n";
  }
  o << "\n";

  o << "## How it was trained\n\n"
    << "- Started " << runDate(f.outDir) << " on "
    << (summary.device.empty() ? f.runInfo.value("device", std::string("?")) : summary.device) << "; " << summary.steps
    << " optimizer steps, " << summary.epochs << " epochs.\n"
    << "- Optimizer " << setting(settings, "optimizer", "kind") << ", learning rate "
    << setting(settings, "optimizer", "lr") << ", weight decay " << setting(settings, "optimizer", "weight_decay")
    << "; schedule " << setting(settings, "schedule", "kind") << "; batch " << setting(settings, "train", "batch_size")
    << "; precision " << setting(settings, "precision", "mode") << "; loss " << setting(settings, "loss", "kind")
    << ".\n"
    << "- Versions: Training Studio " << STUDIO_VERSION << ", LibTorch "
    << f.runInfo.value("libtorch_version", std::string("?"));
  if (exported.contains("onnx"))
    o << "; exported with torch " << exported.value("torch", std::string("?")) << ", ONNX opset "
      << exported["onnx"].value("opset", 0) << ", onnxruntime "
      << exported["onnx"].value("onnxruntime", std::string("?"));
  o << ". `settings.json` holds every setting.\n\n";

  parts.cardUsage(o, facts, names.size());

  o << "## Limitations\n\n"
    << "- Its figures are from " << data.value("test", 0) << " test examples of the same source as its training data; "
    << "on data from elsewhere it may do worse.\n";
  for (size_t i = 0; i < weak.size() && i < 3; ++i)
    if (weak[i].first < 0.8)
      o << "- Weak class: " << weak[i].second << " (test F1 " << number(weak[i].first, "%.3f") << ").\n";
  if (exported.contains("int8") && exported["int8"].value("drop_too_large", false))
    o << "- INT8 loses " << number(exported["int8"].value("drop_points", 0.0), "%.2f")
      << " points of its figure, more than the export allowed: prefer `model.onnx`.\n";
  if (exported.contains("passed") && !exported.value("passed", true))
    o << "- **The export check failed**: a file does not answer as the studio does (export.json says which).\n";
  return o.str();
}

}  // namespace studio
