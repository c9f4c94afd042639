#pragma once
// Figures told in words, one way for the log, the CLI and the window: each
// named as the catalog labels it ("eval mean IoU" is "mean IoU", eval_loss
// "loss"), a share (the catalog's unit "accuracy") as a percentage, a
// figure in the data's own units to four significant digits, any other to
// four decimals. A task's line puts the figure its runs are judged by
// first (taskScoreMetric), then the rest of its test figures in
// taskTestFigures' order, so that a new task or figure is an entry in the
// catalog, not a branch in each place that prints one. Torch-free.
// Thread: pure functions, any thread.

#include <string>
#include <string_view>
#include <vector>

#include "studio/metric_record.h"
#include "studio/run_summary.h"
#include "studio/train_config.h"

namespace studio {

// "mean IoU", "AP50", "loss"; an id the catalog does not know is its own name.
std::string figureName(std::string_view id);
// "0.5123", "91.20%", "1234"
std::string figureValue(std::string_view id, double value);
// The task's figures, the one it is judged by first, then taskTestFigures'.
std::vector<std::string> taskFigureOrder(TaskKind task);
// "mean IoU 0.5123, pixel accuracy 91.20%, Dice (mean of classes) 0.6012,
// loss 0.3012": the ids in order, those the figures lack left out.
std::string figureWords(const std::vector<std::string>& ids, const Figures& figures);
// The task's figures in its order (taskFigureOrder).
std::string taskFigureWords(TaskKind task, const Figures& figures);
// The figure the task is judged by (taskScoreMetric): "mean IoU 0.6012";
// empty where the figures lack it.
std::string taskScoreWords(TaskKind task, const Figures& figures);
// An evaluation record's figures (not the weight average's ema_ ones), in
// the catalog's order: the CLI's line for each evaluation.
std::string evalRecordWords(const MetricRecord& record);

}  // namespace studio
