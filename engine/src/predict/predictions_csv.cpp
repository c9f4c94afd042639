// writePredictionsCsv (studio/predict.h).
#include <algorithm>
#include <cstdio>

#include "studio/csv_table.h"
#include "studio/file_io.h"
#include "studio/predict.h"

namespace studio {

void writePredictionsCsv(const PredictionReport& r, const std::string& path) {
  char number[32];
  if (!r.targets.empty()) {  // a column per target, or per label (its probability) and the labels predicted
    const bool labels = !r.thresholds.empty();
    std::string out = labels ? "source,labels" : "source";
    for (const auto& t : r.targets) out += "," + csvField(t);
    out += ",error\n";
    for (size_t i = 0; i < r.rows.size(); ++i) {
      out += csvField(r.rows[i].source);
      std::string said, values;
      for (size_t k = 0; k < r.targets.size(); ++k) {
        const float v = r.values[i * r.targets.size() + k];
        std::snprintf(number, sizeof number, "%.9g", static_cast<double>(v));
        values += "," + (v == v ? std::string(number) : std::string());
        if (labels && v >= r.thresholds[k]) said += (said.empty() ? "" : r.tagSeparator) + r.targets[k];
      }
      out += (labels ? "," + csvField(said) : std::string()) + values + "," + csvField(r.rows[i].error) + "\n";
    }
    writeFileAtomically(path, out);
    return;
  }
  size_t k = 0;
  for (const auto& row : r.rows) k = std::max(k, row.top.size());
  std::string out = "source,label";
  for (size_t j = 1; j <= k; ++j) out += ",class_" + std::to_string(j) + ",probability_" + std::to_string(j);
  out += ",error\n";
  for (const auto& row : r.rows) {
    out += csvField(row.source) + "," + (row.label >= 0 ? csvField(r.classes[static_cast<size_t>(row.label)]) : "");
    for (size_t j = 0; j < k; ++j) {
      if (j < row.top.size()) {
        std::snprintf(number, sizeof number, "%.9g", static_cast<double>(row.probability[j]));
        out += "," + csvField(r.classes[static_cast<size_t>(row.top[j])]) + "," + number;
      } else {
        out += ",,";
      }
    }
    out += "," + csvField(row.error) + "\n";
  }
  writeFileAtomically(path, out);
}

}  // namespace studio
