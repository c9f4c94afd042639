#pragma once
// Everything a run leaves on disk, written by the engine itself and never
// dependent on a front-end: runs/<timestamp>-<name>/{settings.json,
// metrics.csv, log.txt, summary.json, checkpoints/, tensorboard/}.
// metrics.csv is buffered and flushed at evaluations, checkpoints and every
// few seconds. A write that fails (disk full, folder removed) throws
// IoError naming the file. Every file is written without following links
// (studio/file_io.h): a link planted in a run folder is refused.
// Thread: engine thread.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "run/tensorboard_writer.h"
#include "studio/file_io.h"
#include "studio/metric_record.h"
#include "studio/session.h"
#include "studio/train_config.h"

namespace studio {

class RunRecorder {
 public:
  // A new, unique folder <outputDir>/<YYYYmmdd-HHMMSS>-<name>.
  static std::string createRunDir(const std::string& outputDir, const std::string& name);

  // Opens metrics.csv; on resume keeps only the rows up to `resumeStep`.
  RunRecorder(std::string runDir, bool resume, int64_t resumeStep);
  ~RunRecorder();

  const std::string& dir() const { return m_dir; }
  std::string checkpointDir() const { return m_dir + "/checkpoints"; }
  void writeSettings(const TrainConfig& config, const nlohmann::json& runInfo);
  void append(const MetricRecord& record);
  void flush();
  // Flushes and waits until the rows are on the disk (fsync): before a
  // checkpoint of a step replaces the last one, the rows up to that step
  // must survive any crash.
  void sync();
  void flushIfDue();
  // Drops every row after this step (a rollback to its checkpoint).
  void truncateAfter(int64_t step);
  // A resumed run's last train and eval rows in metrics.csv (none: nullopt):
  // its final figures when it trains no further step itself.
  const std::optional<MetricRecord>& lastTrainRow() const { return m_lastTrain; }
  const std::optional<MetricRecord>& lastEvalRow() const { return m_lastEval; }
  // The end of the run in the TensorBoard files (final figures, status).
  void finish(const RunSummary& summary);

 private:
  void rewriteUpTo(int64_t step);  // -1: the header only
  // metrics.csv's rows up to step, in this studio's columns; InputError
  // (the file and line) when a line is not the studio's own. Notes the last
  // train and eval rows kept.
  std::string keptRows(const std::string& path, int64_t step);
  std::optional<MetricRecord> m_lastTrain, m_lastEval;
  std::string m_dir;
  std::unique_ptr<TensorBoardWriter> m_tensorboard;  // RUN/tensorboard
  AppendFile m_csv;
  std::string m_buffer;
  std::chrono::steady_clock::time_point m_lastFlush;
};

// The settings a run folder holds (settings.json without its run_info).
TrainConfig readRunSettings(const std::string& runDir);
// settings.json's run_info, as far as there is one (an empty object when
// the file, or its run_info, is missing or unreadable).
nlohmann::json storedRunInfo(const std::string& runDir);
// settings.json's run_info; throws InputError when it lacks the data's
// input shape and classes (the run never got as far as its data).
nlohmann::json readRunInfo(const std::string& runDir);
// The data's input shape recorded in run_info.
struct InputShape;
InputShape inputShapeFromRunInfo(const nlohmann::json& runInfo);
// How its images were stored (run_info.input.stored): larger than the input
// and centre-cropped to it for evaluation, or (none recorded) the input's size.
struct StoredShape;
StoredShape storedShapeFromRunInfo(const nlohmann::json& runInfo);
// A multi-label run's threshold per label: its thresholds.json
// (task.tune_thresholds) where the folder has one, else task.threshold.
// Throws InputError naming the file when it is unreadable or lacks a label.
std::vector<double> labelThresholds(const std::string& dir, const TrainConfig& config,
                                    const std::vector<std::string>& labels);
// The model's outputs recorded in run_info: a regression's targets, else
// its classes.
int64_t outputsFromRunInfo(const nlohmann::json& runInfo);
// What an export's preprocessing.json says of the model's input and outputs
// (classes, input_shape, normalization, task, targets with their thresholds,
// features, resize and center_crop), made from the run's settings and
// run_info in dir. The export writes it; predict compares an export's file
// with it, so an edited copy is refused as not describing the model.
nlohmann::json preprocessingFacts(const std::string& dir, const TrainConfig& config, const nlohmann::json& runInfo);

}  // namespace studio
