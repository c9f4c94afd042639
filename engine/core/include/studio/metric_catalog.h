#pragma once
// Every metric described once (after PlotJuggler's series-by-name with
// attributes): its id, its metrics.csv column, its unit, which record carries
// it, and the chart and style it is drawn with. The CSV header, row writer
// and reader and the window's charts all loop over this list, so a new
// metric is a field in MetricRecord and one entry here. Torch-free.
// Thread: immutable data, any thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "studio/metric_record.h"
#include "studio/train_config.h"

namespace studio {

enum class MetricPlot { None, Loss, Accuracy, LearningRate, Throughput, Memory, GradNorm, LossScale };

// Which way a figure improves: the search's default direction, early
// stopping's and the best checkpoint's (train.early_stopping.mode auto).
enum class Better { None, Lower, Higher };

// A set of task kinds (bit 1 << TaskKind).
constexpr unsigned taskBit(TaskKind t) { return 1u << static_cast<unsigned>(t); }
inline constexpr unsigned kEveryTask = taskBit(TaskKind::classification) | taskBit(TaskKind::regression) |
                                       taskBit(TaskKind::multilabel) | taskBit(TaskKind::detection) |
                                       taskBit(TaskKind::segmentation) | taskBit(TaskKind::instance_segmentation);

struct MetricSpec {
  const char* id;     // also the csv column
  const char* label;  // in legends
  const char* unit;
  RecordKind kind;  // the record that carries it
  MetricPlot chart;
  // One of the two: a real-valued or a whole-number field of MetricRecord.
  double MetricRecord::*real = nullptr;
  int64_t MetricRecord::*whole = nullptr;
  // How it is drawn: colour slot, dashed, a dot per sample, on the right axis.
  int colour = 0;
  bool dashed = false;
  bool dots = false;
  bool rightAxis = false;
  // An evaluation figure's judgement: which way is better, the task kinds
  // whose evaluations record it, and what it is a figure of, in messages
  // ("regression", "multi-label or detection").
  Better better = Better::None;
  unsigned tasks = 0;
  const char* figureOf = "";

  bool recordedBy(TaskKind t) const { return (tasks & taskBit(t)) != 0; }
  double value(const MetricRecord& r) const { return real ? r.*real : static_cast<double>(r.*whole); }
};

// In metrics.csv column order (after kind, step and epoch).
const std::vector<MetricSpec>& metricCatalog();
const MetricSpec* findMetric(const std::string& id);
// The evaluation figures a task's runs record, in catalog order ("ema_"
// ones only with `ema`).
std::vector<std::string> taskEvalMetrics(TaskKind task, bool ema = false);
// Every task's evaluation figures, the columns an evaluation record can
// fill, in catalog order ("ema_" ones only with `ema`).
std::vector<std::string> evalFigures(bool ema = false);
// Whether lower is better for this metric; throws InputError naming the
// known evaluation metrics for an id the catalog does not know or that has
// no direction (there is no silent fall-back to accuracy).
bool lowerIsBetter(const std::string& metric);
// "eval_r2 is a regression figure; task.kind is classification: use ..."
// when an evaluation of this task never records the metric (ema_ figures
// as their own); "" when it does. Early stopping and the search check it.
std::string metricTaskProblem(const std::string& metric, const Choice<TaskKind>& taskKind);

// The figures keyed by id (Figures, run_summary.h): the catalog's
// evaluation figures, and eval_map75, a detector's AP75, which its final
// test gives but its evaluations do not record.
bool isFigure(std::string_view id);
// The figures a task's final test gives (summary.json's test_ keys).
const std::vector<std::string>& taskTestFigures(TaskKind task);
// The figure a task's evaluations are ranked by when no metric is named
// (output.save_best's best checkpoint, the best evaluation in
// summary.json): accuracy, a regression's R², a multi-label run's or a
// detector's mAP, a segmenter's mean IoU. Higher is better.
const char* taskScoreMetric(TaskKind task);

}  // namespace studio
