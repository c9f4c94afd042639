#include "studio/figure_words.h"

#include <cstdio>

#include "studio/metric_catalog.h"

namespace studio {

std::string figureName(std::string_view id) {
  if (id == "eval_loss") return "loss";
  if (id == "eval_map75") return "AP75";  // a detector's test figure, not recorded by its evaluations
  const MetricSpec* m = findMetric(std::string(id));
  if (!m) return std::string(id);
  std::string_view label = m->label;
  if (label.substr(0, 5) == "eval ") label.remove_prefix(5);
  return std::string(label);
}

std::string figureValue(std::string_view id, double value) {
  const MetricSpec* m = findMetric(std::string(id));
  const std::string_view unit = m ? m->unit : "";
  char text[64];
  if (unit == "accuracy")
    std::snprintf(text, sizeof text, "%.2f%%", 100.0 * value);
  else if (unit == "target units")
    std::snprintf(text, sizeof text, "%.4g", value);
  else
    std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

std::vector<std::string> taskFigureOrder(TaskKind task) {
  const std::string score = taskScoreMetric(task);
  std::vector<std::string> ids{score};
  for (const std::string& id : taskTestFigures(task))
    if (id != score) ids.push_back(id);
  return ids;
}

std::string figureWords(const std::vector<std::string>& ids, const Figures& figures) {
  std::string out;
  for (const std::string& id : ids) {
    if (!figures.has(id)) continue;
    if (!out.empty()) out += ", ";
    out += figureName(id) + " " + figureValue(id, figures[id]);
  }
  return out;
}

std::string taskFigureWords(TaskKind task, const Figures& figures) {
  return figureWords(taskFigureOrder(task), figures);
}

std::string taskScoreWords(TaskKind task, const Figures& figures) {
  return figureWords({taskScoreMetric(task)}, figures);
}

std::string evalRecordWords(const MetricRecord& record) {
  const std::vector<std::string> ids = evalFigures();
  Figures figures;
  for (const std::string& id : ids) figures.set(id, record.*findMetric(id)->real);
  return figureWords(ids, figures);
}

}  // namespace studio
