// What the window reads back from a run folder: metrics.csv rows, evaluation
// reports (eval/step-N.json); summary.json and settings.json go through the
// same JSON reading as settings (fuzz_settings).
#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/eval_report.h"
#include "studio/metric_record.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  MetricRecord r;
  // The first line as a header (resume reads a run's own columns from it),
  // then every line as a row of those columns and of this studio's.
  const std::optional<MetricsCsvColumns> columns = metricsCsvColumns(text.substr(0, text.find('\n')));
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    (void)parseMetricsCsvRow(text.substr(start, end - start), r);
    if (columns) (void)parseMetricsCsvRow(text.substr(start, end - start), r, *columns);
    start = end + 1;
  }
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) {
    try {
      const EvalReport report = evalReportFromJson(j, "fuzz.json");
      (void)toJson(report).dump();
    } catch (const InputError&) {
    }
  }
  return 0;
}
