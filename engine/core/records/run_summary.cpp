#include "studio/run_summary.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"
#include "studio/metric_catalog.h"
#include "studio/run_layout.h"

namespace studio {

using nlohmann::json;

namespace {
void checkFigure(std::string_view id) {
  if (!isFigure(id)) throw std::logic_error("\"" + std::string(id) + "\" is not a figure of the metric catalog");
}
// "eval_accuracy" -> "accuracy"
std::string_view bare(std::string_view figure) {
  checkFigure(figure);
  return figure.substr(figure.find('_') + 1);
}
}  // namespace

double Figures::operator[](std::string_view id) const {
  checkFigure(id);
  const auto it = m_values.find(id);
  return it == m_values.end() ? MetricRecord::kNone : it->second;
}

bool Figures::has(std::string_view id) const {
  checkFigure(id);
  return m_values.find(id) != m_values.end();
}

void Figures::set(std::string_view id, double value) {
  checkFigure(id);
  if (std::isnan(value))
    m_values.erase(std::string(id));
  else
    m_values.insert_or_assign(std::string(id), value);
}

std::string testKey(std::string_view figure) { return "test_" + std::string(bare(figure)); }
std::string bestKey(std::string_view figure) { return "best_eval_" + std::string(bare(figure)); }

bool finishedStatus(std::optional<RunStatus> status) {
  return status == RunStatus::completed || status == RunStatus::early_stopped;
}

std::string statusName(std::optional<RunStatus> status) { return status ? nameOf(*status) : ""; }

namespace {

json summaryNumber(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

// The figures a summary writes: the task's, or those it has when the task
// is not known (a summary read back).
std::vector<std::string> written(const std::optional<TaskKind>& task, const Figures& f) {
  if (task) return taskTestFigures(*task);
  std::vector<std::string> ids;
  for (const auto& [id, v] : f.values()) ids.push_back(id);
  return ids;
}

// An object's PREFIX_X keys ("test_accuracy", "best_eval_r2") into figures
// (eval_X); a value of the wrong type is named in wrong.
void readFigures(const json& j, const std::string& prefix, Figures& into, std::vector<std::string>& wrong,
                 const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string id = "eval_" + key.substr(prefix.size());
    if (!isFigure(id)) continue;
    if (value.is_number())
      into.set(id, value.get<double>());
    else if (!value.is_null())
      wrong.push_back(where + key);
  }
}

}  // namespace

json summaryJson(const RunSummary& s) {
  json j = {{"status", statusName(s.status)},
            {"error", s.error},
            {"device", s.device},
            {"steps", s.steps},
            {"total_steps", s.totalSteps},
            {"epochs", s.epochs},
            {"final_train_loss", summaryNumber(s.finalTrainLoss)},
            {"final_eval_loss", summaryNumber(s.finalEvalLoss)},
            {"samples_per_second", summaryNumber(s.samplesPerSecond)},
            {"wall_seconds", s.wallSeconds},
            {"skipped_steps", s.nonfinite.skippedSteps},
            {"nonfinite_steps", s.nonfinite.steps},
            {"rollbacks", s.nonfinite.rollbacks}};
  // Every summary has these (null where the task has none).
  for (const char* id : {"eval_accuracy", "eval_loss"}) j[testKey(id)] = summaryNumber(s.test.figures[id]);
  j[bestKey("eval_accuracy")] = summaryNumber(s.bestEval["eval_accuracy"]);
  for (const auto& id : written(s.task, s.test.figures)) j[testKey(id)] = summaryNumber(s.test.figures[id]);
  if (s.task)
    j[bestKey(taskScoreMetric(*s.task))] = summaryNumber(s.bestEval[taskScoreMetric(*s.task)]);
  else
    for (const auto& [id, v] : s.bestEval.values()) j[bestKey(id)] = v;
  if (s.worldSize > 1) j["world_size"] = s.worldSize;
  if (!s.earlyStopping.metric.empty())
    j["early_stopping"] = {{"metric", s.earlyStopping.metric},
                           {"best", summaryNumber(s.earlyStopping.best)},
                           {"best_step", s.earlyStopping.bestStep},
                           {"stopped", !s.earlyStopping.reason.empty()},
                           {"reason", s.earlyStopping.reason}};
  if (!s.lrFind.end.empty())
    j["lr_find"] = {{"suggested_lr", summaryNumber(s.lrFind.suggestion)},
                    {"lowest_loss_lr", summaryNumber(s.lrFind.minimum)},
                    {"ended", s.lrFind.end}};
  if (s.batchFind.micro > 0 || !s.batchFind.tried.empty()) {
    json tried = json::array();
    for (const auto& [n, fits] : s.batchFind.tried) tried.push_back({{"micro_batch", n}, {"fits", fits}});
    j["batch_find"] = {{"largest_micro_batch", s.batchFind.largest},
                       {"micro_batch", s.batchFind.micro},
                       {"accumulation_steps", s.batchFind.accumulation},
                       {"memory_mib", summaryNumber(s.batchFind.limitMiB)},
                       {"tried", tried}};
  }
  if (s.stepper.microBatch > 0) j["micro_batch"] = s.stepper.microBatch;
  // Which weights the test figures are of; the last weights' too (their
  // loss and each task's score) when those are the best checkpoint's.
  const Figures& t = s.test.figures;
  if (t.has("eval_accuracy") || t.has("eval_r2") || t.has("eval_map") || t.has("eval_miou"))
    j["test_weights"] = {{"which", s.test.weights}, {"step", s.test.weightsStep}};
  if (s.test.weights == "best") {
    json last = json::object();
    for (const char* id : {"eval_accuracy", "eval_loss", "eval_r2", "eval_map", "eval_miou"})
      last[testKey(id)] = summaryNumber(s.test.last[id]);
    j["last_weights"] = last;
  }
  if (s.test.ema.has("eval_accuracy"))
    j["ema"] = {{testKey("eval_accuracy"), summaryNumber(s.test.ema["eval_accuracy"])},
                {testKey("eval_loss"), summaryNumber(s.test.ema["eval_loss"])}};
  if (!s.stepper.cudaGraphs.empty()) j["cuda_graphs"] = s.stepper.cudaGraphs;
  j["seconds"] = {{"setup", s.seconds.setup},
                  {"training", s.seconds.train},
                  {"evaluation", s.seconds.eval},
                  {"writing", s.seconds.write}};
  return j;
}

RunSummary summaryFromJson(const json& j, std::vector<std::string>* wrongTypes) {
  RunSummary s;
  std::vector<std::string> wrong;
  if (!j.is_object()) return s;
  auto find = [&](const json& o, const char* k, const std::string& where, auto is) -> const json* {
    const auto it = o.find(k);
    if (it == o.end() || it->is_null()) return nullptr;
    if (!is(*it)) {
      wrong.push_back(where + k);
      return nullptr;
    }
    return &*it;
  };
  auto number = [](const json& v) { return v.is_number(); };
  auto whole = [](const json& v) { return v.is_number_integer(); };
  auto text = [](const json& v) { return v.is_string(); };
  auto object = [](const json& v) { return v.is_object(); };
  auto readText = [&](const json& o, const char* k, std::string& into, const std::string& where = "") {
    if (const json* v = find(o, k, where, text)) into = v->get<std::string>();
  };
  auto readReal = [&](const json& o, const char* k, double& into, const std::string& where = "") {
    if (const json* v = find(o, k, where, number)) into = v->get<double>();
  };
  auto readWhole = [&](const json& o, const char* k, auto& into, const std::string& where = "") {
    if (const json* v = find(o, k, where, whole)) into = v->get<std::remove_reference_t<decltype(into)>>();
  };
  std::string status;
  readText(j, "status", status);
  s.status = choiceNamed<RunStatus>(status);
  readText(j, "error", s.error);
  readText(j, "device", s.device);
  readWhole(j, "steps", s.steps);
  readWhole(j, "total_steps", s.totalSteps);
  readWhole(j, "epochs", s.epochs);
  readWhole(j, "world_size", s.worldSize);
  readReal(j, "final_train_loss", s.finalTrainLoss);
  readReal(j, "final_eval_loss", s.finalEvalLoss);
  readReal(j, "samples_per_second", s.samplesPerSecond);
  readReal(j, "wall_seconds", s.wallSeconds);
  readWhole(j, "skipped_steps", s.nonfinite.skippedSteps);
  readWhole(j, "nonfinite_steps", s.nonfinite.steps);
  readWhole(j, "rollbacks", s.nonfinite.rollbacks);
  readWhole(j, "micro_batch", s.stepper.microBatch);
  readText(j, "cuda_graphs", s.stepper.cudaGraphs);
  readFigures(j, "test_", s.test.figures, wrong, "");
  readFigures(j, "best_eval_", s.bestEval, wrong, "");
  s.test.weights.clear();  // not said
  if (const json* w = find(j, "test_weights", "", object)) {
    readText(*w, "which", s.test.weights, "test_weights.");
    readWhole(*w, "step", s.test.weightsStep, "test_weights.");
  }
  if (const json* l = find(j, "last_weights", "", object))
    readFigures(*l, "test_", s.test.last, wrong, "last_weights.");
  if (const json* e = find(j, "ema", "", object)) readFigures(*e, "test_", s.test.ema, wrong, "ema.");
  if (const json* e = find(j, "early_stopping", "", object)) {
    readText(*e, "metric", s.earlyStopping.metric, "early_stopping.");
    readReal(*e, "best", s.earlyStopping.best, "early_stopping.");
    readWhole(*e, "best_step", s.earlyStopping.bestStep, "early_stopping.");
    readText(*e, "reason", s.earlyStopping.reason, "early_stopping.");
  }
  if (const json* l = find(j, "lr_find", "", object)) {
    readReal(*l, "suggested_lr", s.lrFind.suggestion, "lr_find.");
    readReal(*l, "lowest_loss_lr", s.lrFind.minimum, "lr_find.");
    readText(*l, "ended", s.lrFind.end, "lr_find.");
  }
  if (const json* b = find(j, "batch_find", "", object)) {
    readWhole(*b, "largest_micro_batch", s.batchFind.largest, "batch_find.");
    readWhole(*b, "micro_batch", s.batchFind.micro, "batch_find.");
    readWhole(*b, "accumulation_steps", s.batchFind.accumulation, "batch_find.");
    readReal(*b, "memory_mib", s.batchFind.limitMiB, "batch_find.");
    if (const auto t = b->find("tried"); t != b->end() && t->is_array())
      for (const auto& e : *t)
        if (e.is_object() && e.contains("micro_batch") && e["micro_batch"].is_number_integer())
          s.batchFind.tried.emplace_back(e["micro_batch"].get<int64_t>(),
                                         e.contains("fits") && e["fits"].is_boolean() && e["fits"].get<bool>());
  }
  if (const json* t = find(j, "seconds", "", object)) {
    readReal(*t, "setup", s.seconds.setup, "seconds.");
    readReal(*t, "training", s.seconds.train, "seconds.");
    readReal(*t, "evaluation", s.seconds.eval, "seconds.");
    readReal(*t, "writing", s.seconds.write, "seconds.");
  }
  if (wrongTypes) *wrongTypes = std::move(wrong);
  return s;
}

SummaryFile readSummaryFile(const std::string& runDir) {
  SummaryFile f;
  const std::string path = runDir + "/" + run_files::kSummary;
  std::error_code ec;
  f.summary.runDir = runDir;
  if (runDir.empty() || !std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return f;
  try {
    const json j = json::parse(readFileBytes(path, "run summary"), nullptr, false);
    if (!j.is_object()) {
      f.state = SummaryFile::State::Unreadable;
      f.problem = path + " is not valid JSON";
      return f;
    }
    f.summary = summaryFromJson(j, &f.wrongTypes);
    f.summary.runDir = runDir;
    f.state = SummaryFile::State::Read;
  } catch (const std::exception& e) {
    f.state = SummaryFile::State::Unreadable;
    f.problem = e.what();
  }
  return f;
}

void writeSummaryFile(const std::string& runDir, const RunSummary& s) {
  writeFileAtomically(runDir + "/" + run_files::kSummary, summaryJson(s).dump(2) + "\n");
}

}  // namespace studio
