#include "run/run_recorder.h"

#include "studio/run_layout.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

namespace studio {
namespace fs = std::filesystem;

std::string RunRecorder::createRunDir(const std::string& outputDir, const std::string& name) {
  const std::string stamp = run_files::folderStamp();
  std::error_code ec;
  fs::create_directories(outputDir, ec);
  if (ec) throw IoError("cannot create output folder " + outputDir + ": " + ec.message());
  for (int i = 1;; ++i) {
    std::string dir = outputDir + "/" + stamp + "-" + name + (i > 1 ? "-" + std::to_string(i) : "");
    if (fs::create_directory(dir, ec)) {
      fs::create_directories(dir + "/checkpoints", ec);
      if (ec) throw IoError("cannot create " + dir + "/checkpoints: " + ec.message());
      return dir;
    }
    if (ec) throw IoError("cannot create run folder " + dir + ": " + ec.message());
  }
}

RunRecorder::RunRecorder(std::string runDir, bool resume, int64_t resumeStep) : m_dir(std::move(runDir)) {
  requireRealDirectory(checkpointDir());
  rewriteUpTo(resume ? resumeStep : -1);
  m_tensorboard = std::make_unique<TensorBoardWriter>(m_dir + "/tensorboard", resume ? resumeStep : -1);
  m_lastFlush = std::chrono::steady_clock::now();
}

std::string RunRecorder::keptRows(const std::string& path, int64_t step) {
  m_lastTrain.reset();
  m_lastEval.reset();
  // Rows after the checkpoint are replaced by the run's own from there.
  // Written again in this studio's columns: a file from before a metric
  // existed gets the column, empty in the old rows. A file this studio cannot
  // read as its own is never rewritten: its rows would be lost.
  std::string kept = metricsCsvHeader() + "\n";
  std::ifstream in(path, std::ios::binary);
  if (!in) return kept;  // no file: nothing recorded to keep
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return kept;
  const auto refuse = [&](size_t lineNo, const std::string& what) {
    throw InputError(path + " line " + std::to_string(lineNo) + ": " + what +
                     "; the run's recorded metrics would be lost if it were rewritten, so it is left as it is: "
                     "restore the line, or move the file away to resume without its history");
  };
  size_t lineNo = 0;
  std::optional<MetricsCsvColumns> columns;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const bool terminated = end != std::string::npos;
    std::string line = text.substr(at, (terminated ? end : text.size()) - at);
    at = terminated ? end + 1 : text.size();
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineNo == 1) {
      columns = metricsCsvColumns(line);
      if (!columns)
        refuse(1, "is not a metrics header (it must begin \"kind,step,epoch\"; got \"" + line.substr(0, 80) + "\")");
      continue;
    }
    MetricRecord r;
    if (parseMetricsCsvRow(line, r, *columns)) {
      if (r.step > step) continue;
      kept += metricsCsvRow(r) + "\n";
      if (r.kind == RecordKind::Train) m_lastTrain = r;
      if (r.kind == RecordKind::Eval) m_lastEval = r;
    } else if (terminated) {
      // An unterminated last line is a write a kill cut short: dropped.
      refuse(lineNo, "is not a metrics row of this file's " + std::to_string(columns->catalogIndex.size() + 3) +
                         " columns (got \"" + line.substr(0, 80) + "\")");
    }
  }
  return kept;
}

void RunRecorder::rewriteUpTo(int64_t step) {
  const std::string path = m_dir + "/" + run_files::kMetrics;
  const std::string kept = step >= 0 ? keptRows(path, step) : metricsCsvHeader() + "\n";
  // A new file in either case (renamed into place, replacing whatever was
  // there, a link included), then appended to without following links.
  m_csv.close();
  writeFileAtomically(path, kept);
  m_csv = AppendFile(path);
}

void RunRecorder::truncateAfter(int64_t step) {
  flush();
  rewriteUpTo(step);
  m_tensorboard->goesOnAfter(step);
}

void RunRecorder::finish(const RunSummary& summary) {
  flush();
  m_tensorboard->finish(summary);
}

RunRecorder::~RunRecorder() {
  try {
    flush();
  } catch (...) {
    // Already reported by the flush that failed first.
  }
}

void RunRecorder::writeSettings(const TrainConfig& config, const nlohmann::json& runInfo) {
  nlohmann::json j = toJson(config);
  j["run_info"] = runInfo;
  writeFileAtomically(m_dir + "/" + run_files::kSettings, j.dump(2) + "\n");
  m_tensorboard->settings(config);
}

void RunRecorder::append(const MetricRecord& record) {
  m_buffer += metricsCsvRow(record);
  m_buffer += '\n';
  m_tensorboard->record(record);
}

void RunRecorder::flush() {
  m_lastFlush = std::chrono::steady_clock::now();
  m_tensorboard->flush();
  if (m_buffer.empty()) return;
  m_csv.append(m_buffer);
  m_buffer.clear();
}

void RunRecorder::sync() {
  flush();
  m_csv.sync();
}

void RunRecorder::flushIfDue() {
  if (std::chrono::steady_clock::now() - m_lastFlush > std::chrono::seconds(3)) flush();
}

void RunRecorder::writeSummary(const std::string& runDir, const RunSummary& s) {
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json j = {{"status", s.status},
                      {"error", s.error},
                      {"device", s.device},
                      {"steps", s.steps},
                      {"total_steps", s.totalSteps},
                      {"epochs", s.epochs},
                      {"test_accuracy", num(s.test.accuracy)},
                      {"test_loss", num(s.test.loss)},
                      {"best_eval_accuracy", num(s.bestEval.accuracy)},
                      {"final_train_loss", num(s.finalTrainLoss)},
                      {"final_eval_loss", num(s.finalEvalLoss)},
                      {"samples_per_second", num(s.samplesPerSecond)},
                      {"wall_seconds", s.wallSeconds},
                      {"skipped_steps", s.nonfinite.skippedSteps},
                      {"nonfinite_steps", s.nonfinite.steps},
                      {"rollbacks", s.nonfinite.rollbacks}};
  if (!std::isnan(s.test.r2) || !std::isnan(s.bestEval.r2)) {
    j["test_r2"] = num(s.test.r2);
    j["test_rmse"] = num(s.test.rmse);
    j["test_mae"] = num(s.test.mae);
    j["best_eval_r2"] = num(s.bestEval.r2);
  }
  if (!std::isnan(s.test.map) || !std::isnan(s.bestEval.map)) {
    j["test_map"] = num(s.test.map);
    j["test_f1"] = num(s.test.f1);
    j["best_eval_map"] = num(s.bestEval.map);
  }
  if (!std::isnan(s.test.map50)) {  // a detector's
    j["test_map50"] = num(s.test.map50);
    j["test_map75"] = num(s.test.map75);
    j.erase("test_f1");
  }
  if (s.worldSize > 1) j["world_size"] = s.worldSize;
  if (!s.earlyStopping.metric.empty())
    j["early_stopping"] = {{"metric", s.earlyStopping.metric},
                           {"best", num(s.earlyStopping.best)},
                           {"best_step", s.earlyStopping.bestStep},
                           {"stopped", !s.earlyStopping.reason.empty()},
                           {"reason", s.earlyStopping.reason}};
  if (!s.lrFind.end.empty())
    j["lr_find"] = {
        {"suggested_lr", num(s.lrFind.suggestion)}, {"lowest_loss_lr", num(s.lrFind.minimum)}, {"ended", s.lrFind.end}};
  if (s.batchFind.micro > 0 || !s.batchFind.tried.empty()) {
    nlohmann::json tried = nlohmann::json::array();
    for (const auto& [n, fits] : s.batchFind.tried) tried.push_back({{"micro_batch", n}, {"fits", fits}});
    j["batch_find"] = {{"largest_micro_batch", s.batchFind.largest},
                       {"micro_batch", s.batchFind.micro},
                       {"accumulation_steps", s.batchFind.accumulation},
                       {"memory_mib", num(s.batchFind.limitMiB)},
                       {"tried", tried}};
  }
  if (s.stepper.microBatch > 0) j["micro_batch"] = s.stepper.microBatch;
  // Which weights the test figures are of; the last weights' too when those are the best checkpoint's.
  if (!std::isnan(s.test.accuracy) || !std::isnan(s.test.r2) || !std::isnan(s.test.map))
    j["test_weights"] = {{"which", s.test.weights}, {"step", s.test.weightsStep}};
  if (s.test.weights == "best")
    j["last_weights"] = {{"test_accuracy", num(s.test.lastAccuracy)},
                         {"test_loss", num(s.test.lastLoss)},
                         {"test_r2", num(s.test.lastR2)},
                         {"test_map", num(s.test.lastMap)}};
  if (!std::isnan(s.test.emaAccuracy))
    j["ema"] = {{"test_accuracy", num(s.test.emaAccuracy)}, {"test_loss", num(s.test.emaLoss)}};
  if (!s.stepper.cudaGraphs.empty()) j["cuda_graphs"] = s.stepper.cudaGraphs;
  j["seconds"] = {{"setup", s.seconds.setup},
                  {"training", s.seconds.train},
                  {"evaluation", s.seconds.eval},
                  {"writing", s.seconds.write}};
  writeFileAtomically(runDir + "/" + run_files::kSummary, j.dump(2) + "\n");
}

TrainConfig readRunSettings(const std::string& runDir) { return loadConfigFile(runDir + "/" + run_files::kSettings); }

}  // namespace studio
