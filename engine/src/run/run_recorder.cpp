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
  const std::string path = m_dir + "/metrics.csv";
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
  writeFileAtomically(m_dir + "/settings.json", j.dump(2) + "\n");
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
                      {"test_accuracy", num(s.testAccuracy)},
                      {"test_loss", num(s.testLoss)},
                      {"best_eval_accuracy", num(s.bestEvalAccuracy)},
                      {"final_train_loss", num(s.finalTrainLoss)},
                      {"final_eval_loss", num(s.finalEvalLoss)},
                      {"samples_per_second", num(s.samplesPerSecond)},
                      {"wall_seconds", s.wallSeconds},
                      {"skipped_steps", s.skippedSteps},
                      {"nonfinite_steps", s.nonfiniteSteps},
                      {"rollbacks", s.rollbacks}};
  if (!std::isnan(s.testR2) || !std::isnan(s.bestEvalR2)) {
    j["test_r2"] = num(s.testR2);
    j["test_rmse"] = num(s.testRmse);
    j["test_mae"] = num(s.testMae);
    j["best_eval_r2"] = num(s.bestEvalR2);
  }
  if (!std::isnan(s.testMap) || !std::isnan(s.bestEvalMap)) {
    j["test_map"] = num(s.testMap);
    j["test_f1"] = num(s.testF1);
    j["best_eval_map"] = num(s.bestEvalMap);
  }
  if (s.worldSize > 1) j["world_size"] = s.worldSize;
  if (!s.earlyStoppingMetric.empty())
    j["early_stopping"] = {{"metric", s.earlyStoppingMetric},
                           {"best", num(s.earlyStoppingBest)},
                           {"best_step", s.earlyStoppingBestStep},
                           {"stopped", !s.earlyStopReason.empty()},
                           {"reason", s.earlyStopReason}};
  if (!s.lrFindEnd.empty())
    j["lr_find"] = {
        {"suggested_lr", num(s.lrFindSuggestion)}, {"lowest_loss_lr", num(s.lrFindMinimum)}, {"ended", s.lrFindEnd}};
  if (s.batchFindMicro > 0 || !s.batchFindTried.empty()) {
    nlohmann::json tried = nlohmann::json::array();
    for (const auto& [n, fits] : s.batchFindTried) tried.push_back({{"micro_batch", n}, {"fits", fits}});
    j["batch_find"] = {{"largest_micro_batch", s.batchFindLargest},
                       {"micro_batch", s.batchFindMicro},
                       {"accumulation_steps", s.batchFindAccumulation},
                       {"memory_mib", num(s.batchFindLimitMiB)},
                       {"tried", tried}};
  }
  if (s.microBatch > 0) j["micro_batch"] = s.microBatch;
  // Which weights the test figures are of; the last weights' too when those are the best checkpoint's.
  if (!std::isnan(s.testAccuracy) || !std::isnan(s.testR2) || !std::isnan(s.testMap))
    j["test_weights"] = {{"which", s.testWeights}, {"step", s.testWeightsStep}};
  if (s.testWeights == "best")
    j["last_weights"] = {{"test_accuracy", num(s.lastTestAccuracy)},
                         {"test_loss", num(s.lastTestLoss)},
                         {"test_r2", num(s.lastTestR2)},
                         {"test_map", num(s.lastTestMap)}};
  if (!std::isnan(s.emaTestAccuracy))
    j["ema"] = {{"test_accuracy", num(s.emaTestAccuracy)}, {"test_loss", num(s.emaTestLoss)}};
  if (!s.cudaGraphs.empty()) j["cuda_graphs"] = s.cudaGraphs;
  j["seconds"] = {{"setup", s.setupSeconds},
                  {"training", s.trainSeconds},
                  {"evaluation", s.evalSeconds},
                  {"writing", s.writeSeconds}};
  writeFileAtomically(runDir + "/summary.json", j.dump(2) + "\n");
}

TrainConfig readRunSettings(const std::string& runDir) { return loadConfigFile(runDir + "/settings.json"); }

}  // namespace studio
