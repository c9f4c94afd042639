#include "run/run_recorder.h"

#include <ctime>
#include <filesystem>
#include <sstream>
#include <vector>

namespace studio {
namespace fs = std::filesystem;

void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RunIoError("cannot create " + tmp + " (folder missing or not writable)");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);  // whatever was there before stays as it was
      throw RunIoError("cannot write " + path + " (disk full?)");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) throw RunIoError("cannot write " + path + ": " + ec.message());
}

std::string RunRecorder::createRunDir(const std::string& outputDir, const std::string& name) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  std::error_code ec;
  fs::create_directories(outputDir, ec);
  if (ec) throw RunIoError("cannot create output folder " + outputDir + ": " + ec.message());
  for (int i = 1;; ++i) {
    std::string dir = outputDir + "/" + stamp + "-" + name + (i > 1 ? "-" + std::to_string(i) : "");
    if (fs::create_directory(dir, ec)) {
      fs::create_directories(dir + "/checkpoints", ec);
      if (ec) throw RunIoError("cannot create " + dir + "/checkpoints: " + ec.message());
      return dir;
    }
    if (ec) throw RunIoError("cannot create run folder " + dir + ": " + ec.message());
  }
}

RunRecorder::RunRecorder(std::string runDir, bool resume, int64_t resumeStep) : m_dir(std::move(runDir)) {
  const std::string path = m_dir + "/metrics.csv";
  std::string kept = metricsCsvHeader() + "\n";
  if (resume) {
    // Rows after the checkpoint are replaced by the resumed run's own.
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      MetricRecord r;
      if (parseMetricsCsvRow(line, r) && r.step <= resumeStep) kept += line + "\n";
    }
    writeFileAtomically(path, kept);
    m_csv.open(path, std::ios::app);
  } else {
    m_csv.open(path, std::ios::trunc);
    m_csv << kept;
  }
  if (!m_csv) throw RunIoError("cannot open " + path + " for writing");
  m_lastFlush = std::chrono::steady_clock::now();
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
}

void RunRecorder::append(const MetricRecord& record) {
  m_buffer += metricsCsvRow(record);
  m_buffer += '\n';
}

void RunRecorder::flush() {
  m_lastFlush = std::chrono::steady_clock::now();
  if (m_buffer.empty()) return;
  m_csv << m_buffer;
  m_csv.flush();
  if (!m_csv) throw RunIoError("cannot write " + m_dir + "/metrics.csv (disk full?)");
  m_buffer.clear();
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
                      {"skipped_steps", s.skippedSteps}};
  writeFileAtomically(runDir + "/summary.json", j.dump(2) + "\n");
}

TrainConfig readRunSettings(const std::string& runDir) {
  return loadConfigFile(runDir + "/settings.json");
}

}  // namespace studio
