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

TrainConfig readRunSettings(const std::string& runDir) { return loadConfigFile(runDir + "/" + run_files::kSettings); }

}  // namespace studio
