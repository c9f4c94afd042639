#include "studio/eval_report.h"

#include <array>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
double numOr(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}
double ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : kNaN; }

// A whole number of the file, checked: nlohmann's own conversion of 1e20 to
// an integer is undefined behaviour.
int64_t whole(const nlohmann::json& j, const char* what) {
  if (!j.is_number_integer()) throw InputError(std::string(what) + " is not a whole number");
  return j.get<int64_t>();
}
int64_t wholeAt(const nlohmann::json& j, const char* key) { return whole(j.at(key), key); }
double realAt(const nlohmann::json& j, const char* key) {
  if (!j.at(key).is_number()) throw InputError(std::string(key) + " is not a number");
  return j.at(key).get<double>();
}

nlohmann::json curveJson(const std::vector<std::pair<double, double>>& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [a, b] : c) out.push_back({num(a), num(b)});
  return out;
}

std::vector<std::pair<double, double>> curveOf(const nlohmann::json& c) {
  std::vector<std::pair<double, double>> out;
  for (const auto& p : c) {
    if (!p.is_array() || p.size() != 2) throw InputError("a curve's point is not two numbers");
    out.emplace_back(p[0].is_number() ? p[0].get<double>() : kNaN, p[1].is_number() ? p[1].get<double>() : kNaN);
  }
  return out;
}

nlohmann::json reliabilityJson(const Reliability& r) {
  nlohmann::json bins = nlohmann::json::array();
  for (size_t k = 0; k < r.count.size(); ++k)
    bins.push_back({{"count", r.count[k]}, {"confidence", num(r.confidence[k])}, {"accuracy", num(r.accuracy[k])}});
  return {{"ece", num(r.ece)}, {"bins", bins}};
}

Reliability reliabilityFromJson(const nlohmann::json& j) {
  Reliability r;
  if (!j.is_object()) return r;
  r.ece = numOr(j, "ece");
  for (const auto& b : j.at("bins")) {
    const int64_t count = wholeAt(b, "count");
    if (count < 0) throw InputError("a reliability bin's count is negative");
    r.count.push_back(count);
    r.confidence.push_back(numOr(b, "confidence"));
    r.accuracy.push_back(numOr(b, "accuracy"));
  }
  return r;
}

// What every task's report begins with (a classification's has no "task":
// reports written before there were tasks read as classification).
nlohmann::json header(const EvalReport& r) {
  return {{"step", r.step},   {"epoch", r.epoch},    {"task", r.task},
          {"split", r.split}, {"loss", num(r.loss)}, {"examples", r.examples}};
}

// A regression's figures and plotted values (every row as wide as targets).
void readRegression(const nlohmann::json& j, EvalReport& r) {
  r.task = TaskKind::regression;
  r.accuracy = kNaN;
  r.rmse = numOr(j, "rmse");
  r.mae = numOr(j, "mae");
  r.r2 = numOr(j, "r2");
  r.examples = wholeAt(j, "examples");
  for (const auto& t : j.at("targets")) {
    TargetFigures f;
    f.name = t.at("target").get<std::string>();
    f.rmse = numOr(t, "rmse");
    f.mae = numOr(t, "mae");
    f.r2 = numOr(t, "r2");
    f.mean = numOr(t, "mean");
    f.std = numOr(t, "std");
    r.targets.push_back(f);
  }
  auto rows = [&](const char* key) {
    std::vector<std::vector<double>> out;
    for (const auto& row : j.at(key)) {
      if (!row.is_array() || row.size() != r.targets.size())
        throw InputError(std::string(key) + " has a row that is not one value per target");
      std::vector<double> v;
      for (const auto& x : row) v.push_back(x.is_number() ? x.get<double>() : kNaN);
      out.push_back(std::move(v));
    }
    return out;
  };
  r.actual = rows("actual");
  r.predicted = rows("predicted");
  if (r.actual.size() != r.predicted.size()) throw InputError("actual and predicted differ in length");
}

// A multi-label's figures and each label's curves.
void readMultilabel(const nlohmann::json& j, EvalReport& r) {
  r.task = TaskKind::multilabel;
  r.accuracy = numOr(j, "accuracy");
  r.microF1 = numOr(j, "micro_f1");
  r.macroF1 = numOr(j, "macro_f1");
  r.map = numOr(j, "map");
  r.examples = wholeAt(j, "examples");
  const auto& curve = curveOf;
  for (const auto& l : j.at("per_label")) {
    LabelFigures f;
    f.name = l.at("label").get<std::string>();
    f.support = wholeAt(l, "support");
    f.predicted = wholeAt(l, "predicted");
    f.correct = wholeAt(l, "correct");
    f.precision = numOr(l, "precision");
    f.recall = numOr(l, "recall");
    f.f1 = numOr(l, "f1");
    f.averagePrecision = numOr(l, "average_precision");
    f.rocAuc = numOr(l, "roc_auc");
    f.threshold = numOr(l, "threshold");
    f.bestThreshold = numOr(l, "best_threshold");
    f.bestF1 = numOr(l, "best_f1");
    f.roc = curve(l.at("roc"));
    f.pr = curve(l.at("pr"));
    r.labels.push_back(std::move(f));
  }
}

// COCOeval.stats by name, in its order (EvalReport::coco).
constexpr std::array<const char*, 12> kCocoStats{"map",   "map50",  "map75",   "map_small", "map_medium", "map_large",
                                                 "mar_1", "mar_10", "mar_100", "mar_small", "mar_medium", "mar_large"};

// A detector's COCO figures and each class's AP.
void readDetection(const nlohmann::json& j, EvalReport& r, TaskKind task) {
  r.task = task;
  for (const char* key : kCocoStats) r.coco.push_back(numOr(j, key));
  if (const auto m = j.find("mask"); m != j.end() && m->is_object())
    for (const char* key : kCocoStats) r.maskCoco.push_back(numOr(*m, key));
  r.map = r.coco[0];
  r.accuracy = kNaN;
  r.examples = wholeAt(j, "examples");
  r.classes = j.at("classes").get<std::vector<std::string>>();
  for (const auto& c : j.at("per_class")) {
    r.apPerClass.push_back(numOr(c, "ap"));
    r.precision50.push_back(c.value("precision50", std::vector<double>{}));
    if (!r.maskCoco.empty()) r.maskApPerClass.push_back(numOr(c, "mask_ap"));
  }
}

}  // namespace

std::vector<std::vector<int64_t>> confusionFromJson(const nlohmann::json& matrix, size_t classes) {
  std::vector<std::vector<int64_t>> out;
  if (!matrix.is_array() || matrix.size() != classes) throw InputError("its confusion matrix is not classes x classes");
  for (const auto& row : matrix) {
    if (!row.is_array() || row.size() != classes) throw InputError("its confusion matrix is not classes x classes");
    std::vector<int64_t> counts;
    for (const auto& c : row) {
      const int64_t v = whole(c, "a confusion count");
      if (v < 0 || v > (int64_t(1) << 50)) throw InputError("a confusion count is out of range");
      counts.push_back(v);
    }
    out.push_back(std::move(counts));
  }
  return out;
}

void computeClassFigures(EvalReport& r) {
  const size_t k = r.classes.size();
  r.perClass.assign(k, {});
  int64_t total = 0, correct = 0;
  for (size_t t = 0; t < k; ++t)
    for (size_t p = 0; p < k; ++p) {
      total += r.confusion[t][p];
      if (t == p) correct += r.confusion[t][p];
    }
  for (size_t c = 0; c < k; ++c) {
    ClassFigures& f = r.perClass[c];
    f.name = r.classes[c];
    for (size_t j = 0; j < k; ++j) {
      f.support += r.confusion[c][j];
      f.predicted += r.confusion[j][c];
    }
    f.correct = r.confusion[c][c];
    f.precision = ratio(f.correct, f.predicted);
    f.recall = ratio(f.correct, f.support);
    f.f1 = std::isfinite(f.precision) && std::isfinite(f.recall) && f.precision + f.recall > 0
               ? 2 * f.precision * f.recall / (f.precision + f.recall)
               : (std::isfinite(f.precision) && std::isfinite(f.recall) ? 0.0 : kNaN);
    // One-vs-rest: examples whose membership of this class was judged right.
    const int64_t wrong = (f.support - f.correct) + (f.predicted - f.correct);
    f.accuracy = ratio(total - wrong, total);
  }
  r.examples = total;
  r.accuracy = ratio(correct, total);
}

namespace {
nlohmann::json reportJson(const EvalReport& r) {
  nlohmann::json perClass = nlohmann::json::array();
  for (const auto& f : r.perClass) {
    perClass.push_back({{"class", f.name},
                        {"support", f.support},
                        {"predicted", f.predicted},
                        {"correct", f.correct},
                        {"precision", num(f.precision)},
                        {"recall", num(f.recall)},
                        {"f1", num(f.f1)},
                        {"accuracy", num(f.accuracy)}});
    if (!f.roc.empty() || !f.pr.empty())
      perClass.back().update({{"average_precision", num(f.averagePrecision)},
                              {"roc_auc", num(f.rocAuc)},
                              {"roc", curveJson(f.roc)},
                              {"pr", curveJson(f.pr)}});
  }
  nlohmann::json wrong = nlohmann::json::array();
  for (const auto& w : r.wrong)
    wrong.push_back({{"index", w.index},
                     {"source", w.source},
                     {"true", w.truth},
                     {"predicted", w.predicted},
                     {"confidence", w.confidence}});
  if (r.task == TaskKind::multilabel) {
    nlohmann::json labels = nlohmann::json::array();
    const auto& curve = curveJson;
    for (const auto& f : r.labels)
      labels.push_back({{"label", f.name},
                        {"support", f.support},
                        {"predicted", f.predicted},
                        {"correct", f.correct},
                        {"precision", num(f.precision)},
                        {"recall", num(f.recall)},
                        {"f1", num(f.f1)},
                        {"average_precision", num(f.averagePrecision)},
                        {"roc_auc", num(f.rocAuc)},
                        {"threshold", f.threshold},
                        {"best_threshold", f.bestThreshold},
                        {"best_f1", f.bestF1},
                        {"roc", curve(f.roc)},
                        {"pr", curve(f.pr)}});
    nlohmann::json j = header(r);
    j.update({{"accuracy", num(r.accuracy)},
              {"micro_f1", num(r.microF1)},
              {"macro_f1", num(r.macroF1)},
              {"map", num(r.map)},
              {"per_label", labels}});
    return j;
  }
  if (boxesTask(r.task)) {
    // COCOeval.stats by name, and AP@[.50:.95] per class; an instance
    // segmentation's masks' stats under "mask", their AP per class as "mask_ap".
    nlohmann::json j = header(r);
    for (size_t i = 0; i < r.coco.size() && i < kCocoStats.size(); ++i) j[kCocoStats[i]] = num(r.coco[i]);
    if (!r.maskCoco.empty()) {
      nlohmann::json& m = j["mask"];
      for (size_t i = 0; i < r.maskCoco.size() && i < kCocoStats.size(); ++i) m[kCocoStats[i]] = num(r.maskCoco[i]);
    }
    nlohmann::json perClass = nlohmann::json::array();
    for (size_t i = 0; i < r.apPerClass.size(); ++i) {
      perClass.push_back(
          {{"class", i < r.classes.size() ? r.classes[i] : std::to_string(i)}, {"ap", num(r.apPerClass[i])}});
      if (i < r.precision50.size() && !r.precision50[i].empty()) perClass.back()["precision50"] = r.precision50[i];
      if (i < r.maskApPerClass.size()) perClass.back()["mask_ap"] = num(r.maskApPerClass[i]);
    }
    j.update({{"examples", r.examples}, {"classes", r.classes}, {"per_class", perClass}});
    return j;
  }
  if (r.task == TaskKind::segmentation) {
    nlohmann::json j = header(r);
    j.update(segmentationReportJson(r));
    return j;
  }
  if (r.task == TaskKind::regression) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& t : r.targets)
      targets.push_back({{"target", t.name},
                         {"rmse", num(t.rmse)},
                         {"mae", num(t.mae)},
                         {"r2", num(t.r2)},
                         {"mean", num(t.mean)},
                         {"std", num(t.std)}});
    nlohmann::json j = header(r);
    j.update({{"rmse", num(r.rmse)},
              {"mae", num(r.mae)},
              {"r2", num(r.r2)},
              {"targets", targets},
              {"actual", r.actual},
              {"predicted", r.predicted}});
    return j;
  }
  return {{"step", r.step},
          {"epoch", r.epoch},
          {"split", r.split},
          {"loss", num(r.loss)},
          {"accuracy", num(r.accuracy)},
          {"examples", r.examples},
          {"classes", r.classes},
          {"confusion", r.confusion},
          {"per_class", perClass},
          {"most_confident_wrong", wrong},
          {"reliability", reliabilityJson(r.reliability)},
          {"thumbnails", r.thumbnails},
          {"thumbnail_size", {r.thumbnailHeight, r.thumbnailWidth}}};
}

}  // namespace

nlohmann::json toJson(const EvalReport& r) {
  nlohmann::json j = reportJson(r);
  if (!r.weights.empty()) j["weights"] = {{"which", r.weights}, {"step", r.weightsStep}};
  return j;
}

EvalReport evalReportFromJson(const nlohmann::json& j, const std::string& path) {
  EvalReport r;
  try {
    r.step = wholeAt(j, "step");
    r.epoch = wholeAt(j, "epoch");
    r.split = j.at("split").get<std::string>();
    if (const auto w = j.find("weights"); w != j.end() && w->is_object()) {
      r.weights = w->value("which", std::string());
      r.weightsStep = wholeAt(*w, "step");
    }
    r.loss = numOr(j, "loss");
    Choice<TaskKind> task;  // written before there were tasks: a classification's
    if (const auto t = j.find("task"); t != j.end() && t->is_string()) task.setName(t->get<std::string>());
    if (task == TaskKind::regression) {
      readRegression(j, r);
      return r;
    }
    if (task == TaskKind::multilabel) {
      readMultilabel(j, r);
      return r;
    }
    if (boxesTask(task)) {
      readDetection(j, r, task.value());
      return r;
    }
    if (task == TaskKind::segmentation) {
      r.examples = wholeAt(j, "examples");
      readSegmentationReport(j, r);
      return r;
    }
    r.classes = j.at("classes").get<std::vector<std::string>>();
    const size_t k = r.classes.size();
    r.confusion = confusionFromJson(j.at("confusion"), k);
    computeClassFigures(r);
    if (const auto pc = j.find("per_class"); pc != j.end() && pc->is_array() && pc->size() == k)
      for (size_t c = 0; c < k; ++c) {
        const auto& f = (*pc)[c];
        if (!f.is_object() || !f.contains("roc")) continue;
        r.perClass[c].averagePrecision = numOr(f, "average_precision");
        r.perClass[c].rocAuc = numOr(f, "roc_auc");
        r.perClass[c].roc = curveOf(f.at("roc"));
        r.perClass[c].pr = curveOf(f.at("pr"));
      }
    if (j.contains("reliability")) r.reliability = reliabilityFromJson(j["reliability"]);
    const auto wrong = j.contains("most_confident_wrong") ? j["most_confident_wrong"] : nlohmann::json::array();
    if (!wrong.is_array()) throw InputError("most_confident_wrong is not a list");
    for (const auto& w : wrong) {
      WrongExample e;
      e.index = wholeAt(w, "index");
      e.source = w.contains("source") && w["source"].is_string() ? w["source"].get<std::string>() : std::string();
      e.truth = wholeAt(w, "true");
      e.predicted = wholeAt(w, "predicted");
      e.confidence = realAt(w, "confidence");
      if (e.truth < 0 || e.predicted < 0 || e.truth >= static_cast<int64_t>(k) ||
          e.predicted >= static_cast<int64_t>(k))
        throw InputError("an example's class is out of range");
      r.wrong.push_back(e);
    }
    r.thumbnails = j.contains("thumbnails") && j["thumbnails"].is_string() ? j["thumbnails"].get<std::string>() : "";
    if (j.contains("thumbnail_size") && j["thumbnail_size"].is_array() && j["thumbnail_size"].size() == 2) {
      r.thumbnailHeight = whole(j["thumbnail_size"][0], "thumbnail_size");
      r.thumbnailWidth = whole(j["thumbnail_size"][1], "thumbnail_size");
      if (r.thumbnailHeight < 0 || r.thumbnailWidth < 0 || r.thumbnailHeight > 4096 || r.thumbnailWidth > 4096)
        throw InputError("thumbnail_size is out of range");
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError("evaluation report " + path + " is not readable: " + e.what());
  } catch (const InputError& e) {
    throw InputError("evaluation report " + path + " is not readable: " + e.what());
  }
  return r;
}

EvalReport readEvalReport(const std::string& path) {
  const auto j = nlohmann::json::parse(readFileBytes(path, "evaluation report"), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError("evaluation report " + path + " is not valid JSON");
  return evalReportFromJson(j, path);
}

}  // namespace studio
