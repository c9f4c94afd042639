#include "run/run_recorder.h"

#include <ctime>
#include <fstream>
#include <filesystem>
#include <sstream>
#include <vector>

namespace studio {
namespace fs = std::filesystem;

std::string RunRecorder::createRunDir(const std::string& outputDir, const std::string& name) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
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

void RunRecorder::rewriteUpTo(int64_t step) {
  const std::string path = m_dir + "/metrics.csv";
  std::string kept = metricsCsvHeader() + "\n";
  if (step >= 0) {
    // Rows after the checkpoint are replaced by the run's own from there.
    // Written again in this studio's columns: a file from before a metric
    // existed gets the column, empty in the old rows.
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    const auto columns = metricsCsvColumns(line);
    while (columns && std::getline(in, line)) {
      MetricRecord r;
      if (parseMetricsCsvRow(line, r, *columns) && r.step <= step) kept += metricsCsvRow(r) + "\n";
    }
  }
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
  if (s.worldSize > 1) j["world_size"] = s.worldSize;
  if (!s.earlyStoppingMetric.empty())
    j["early_stopping"] = {{"metric", s.earlyStoppingMetric},
                           {"best", num(s.earlyStoppingBest)},
                           {"best_step", s.earlyStoppingBestStep},
                           {"stopped", !s.earlyStopReason.empty()},
                           {"reason", s.earlyStopReason}};
  if (!s.lrFindEnd.empty())
    j["lr_find"] = {{"suggested_lr", num(s.lrFindSuggestion)}, {"lowest_loss_lr", num(s.lrFindMinimum)},
                    {"ended", s.lrFindEnd}};
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
  if (!std::isnan(s.emaTestAccuracy))
    j["ema"] = {{"test_accuracy", num(s.emaTestAccuracy)}, {"test_loss", num(s.emaTestLoss)}};
  if (!s.cudaGraphs.empty()) j["cuda_graphs"] = s.cudaGraphs;
  j["seconds"] = {{"setup", s.setupSeconds},
                  {"training", s.trainSeconds},
                  {"evaluation", s.evalSeconds},
                  {"writing", s.writeSeconds}};
  writeFileAtomically(runDir + "/summary.json", j.dump(2) + "\n");
}

TrainConfig readRunSettings(const std::string& runDir) {
  return loadConfigFile(runDir + "/settings.json");
}

}  // namespace studio
