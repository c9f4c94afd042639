#pragma once
// A run's final figures, also its run folder's summary.json, and the one
// codec that writes and reads that file: the recorder writes it, and the
// launcher, the audit, continue, the checkpoint chooser, the model card and
// the window's runs table read it through readSummaryFile. Evaluation
// figures are keyed by the metric catalog's ids (metric_catalog.h), never
// named fields, so a new task's figures need no new field here. Torch-free.
// Thread: plain data.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "studio/metric_record.h"
#include "studio/train_config.h"

namespace studio {

// Evaluation figures keyed by metric id ("eval_accuracy", "eval_r2", ...;
// isFigure says which ids are figures). A figure not there reads as
// MetricRecord::kNone (NaN), and setting NaN removes it. An id that is no figure throws
// std::logic_error: a misspelt id is a bug, never a silent NaN.
class Figures {
 public:
  double operator[](std::string_view id) const;
  bool has(std::string_view id) const;  // there (not NaN)
  // A value that is not a number (NaN) removes the figure.
  void set(std::string_view id, double value);
  bool empty() const { return m_values.empty(); }
  const std::map<std::string, double, std::less<>>& values() const { return m_values; }
  bool operator==(const Figures&) const = default;

 private:
  std::map<std::string, double, std::less<>> m_values;
};

// How a run ended: summary.json's status. completed and early-stopped went
// to their end (finishedStatus); a stopped run can be resumed.
STUDIO_CHOICE_NAMED(RunStatus, "completed, early-stopped, stopped, failed", completed, early_stopped, stopped, failed)

// Final figures of a run, grouped by who makes them: the run itself, its
// task's evaluation on the test split, the callbacks (non-finite policy,
// early stopping), the step, a probe (lr-find, batch-find), and where the
// time went.
struct RunSummary {
  std::string runDir;
  // Unset while it runs, and in a summary.json that names none of them.
  std::optional<RunStatus> status;
  std::string error;      // what went wrong, for failed runs
  bool badInput = false;  // failed on the person's input (settings, data files)
  std::string device;
  // The run's task: which figures summary.json holds (taskTestFigures).
  // Unset in a summary read from a file (summary.json does not say it).
  std::optional<TaskKind> task;
  int64_t steps = 0;
  int64_t totalSteps = 0;
  int64_t epochs = 0;
  double finalTrainLoss = MetricRecord::kNone;
  double finalEvalLoss = MetricRecord::kNone;
  double samplesPerSecond = MetricRecord::kNone;  // training samples over training time
  double wallSeconds = 0;
  // Under torchrun: this process's rank and the number of processes (rank
  // 0 writes the run folder; the figures are the same on every rank).
  int rank = 0;
  int worldSize = 1;

  // The task's figures on the test split (taskTestFigures): a classifier's
  // accuracy and loss, a multi-label run's subset accuracy, mAP and macro
  // F1, a regression's R², RMSE and MAE averaged over its targets in the
  // data's units, a detector's COCO AP@[.50:.95], AP50 and AP75.
  struct TestFigures {
    Figures figures;
    // The weights they are of: "last" (the model at the end), or "best"
    // (the best checkpoint's, saved at weightsStep): a run with a
    // validation split and a best checkpoint of another step is tested with
    // those, as Keras's restore_best_weights and Lightning's
    // test(ckpt_path="best") do. Export and predict use them by default
    // (--which auto). With "best", the last weights' figures too. Read
    // from a summary.json that does not say (no test figures): "".
    std::string weights = "last";
    int64_t weightsStep = 0;
    Figures last;
    // train.ema: the weights' moving average (accuracy and loss).
    Figures ema;
  } test;
  // The best evaluation's score (taskScoreMetric: accuracy, R² or mAP).
  Figures bestEval;

  // The non-finite policy (train.on_nonfinite): steps not applied (fp16
  // overflow, non-finite loss), steps whose loss or gradients were not
  // finite, and rollbacks.
  struct NonfiniteFigures {
    int64_t skippedSteps = 0, steps = 0, rollbacks = 0;
  } nonfinite;
  // train.early_stopping: its metric ("" when off), the best value and its
  // step (the best checkpoint's), and why the run ended early ("" if it did not).
  struct EarlyStoppingFigures {
    std::string metric;
    double best = MetricRecord::kNone;
    int64_t bestStep = 0;
    std::string reason;
  } earlyStopping;
  // The step: performance.cuda_graphs, "on (recorded at step N)" or "off:
  // why"; memory.oom_backoff's micro-batch at the end, when it was lowered.
  struct StepFigures {
    std::string cudaGraphs;
    int64_t microBatch = 0;
  } stepper;

  // A learning-rate range test (Session::findLearningRate): the suggested
  // rate (where the smoothed loss falls fastest), the rate of the lowest
  // smoothed loss, and why the sweep ended.
  struct LrFindFigures {
    double suggestion = MetricRecord::kNone, minimum = MetricRecord::kNone;
    std::string end;
  } lrFind;
  // The largest micro-batch that fits (Session::findBatchSize): 0 when the
  // run was not one; the micro-batch and accumulation that keep the
  // effective batch of the settings; the memory it was measured against;
  // each size tried and whether it fit.
  struct BatchFindFigures {
    int64_t largest = 0, micro = 0, accumulation = 0;
    double limitMiB = MetricRecord::kNone;
    std::vector<std::pair<int64_t, bool>> tried;
  } batchFind;

  // Where the wall time went: setting up (data, model, device), training
  // steps, evaluations, checkpoints and other writes.
  struct TimeSplit {
    double setup = 0, train = 0, eval = 0, write = 0;
  } seconds;
};

// summary.json's key of a test figure ("eval_accuracy" -> "test_accuracy")
// and of the best evaluation's ("best_eval_accuracy").
std::string testKey(std::string_view figure);
std::string bestKey(std::string_view figure);

// summary.json's content. Every summary has test_accuracy, test_loss and
// best_eval_accuracy (null where the task has none), then the task's test
// figures and its best evaluation's score.
nlohmann::json summaryJson(const RunSummary& s);
// A summary as far as it can be read: a value of the wrong type reads as
// absent (never a json type_error), and its key is added to wrongTypes.
RunSummary summaryFromJson(const nlohmann::json& j, std::vector<std::string>* wrongTypes = nullptr);

// A run folder's summary.json: absent (a live, killed or never-started
// run), not readable as a JSON object (problem says why), or read.
struct SummaryFile {
  enum class State { Missing, Unreadable, Read } state = State::Missing;
  RunSummary summary;
  std::string problem;
  std::vector<std::string> wrongTypes;
  bool read() const { return state == State::Read; }
};
SummaryFile readSummaryFile(const std::string& runDir);
// Writes it whole or not at all (writeFileAtomically).
void writeSummaryFile(const std::string& runDir, const RunSummary& s);

// completed or early-stopped: a run that went to its end.
bool finishedStatus(std::optional<RunStatus> status);
// The status's name; "" when unset.
std::string statusName(std::optional<RunStatus> status);

}  // namespace studio
