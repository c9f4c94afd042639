#include "studio/metric_record.h"

#include <cstdio>
#include <sstream>
#include <vector>

#include "studio/metric_catalog.h"

namespace studio {
namespace {

const char* kindName(RecordKind k) {
  switch (k) {
    case RecordKind::Train:
      return "train";
    case RecordKind::Eval:
      return "eval";
    case RecordKind::LrChange:
      return "lr_change";
    case RecordKind::NonFinite:
      return "nonfinite";
    case RecordKind::Rollback:
      return "rollback";
    case RecordKind::EarlyStop:
      return "early_stop";
    case RecordKind::OomBackoff:
      return "oom_backoff";
    case RecordKind::Unfreeze:
      return "unfreeze";
  }
  return "train";
}

void put(std::string& s, double v) {
  s += ',';
  if (std::isnan(v)) return;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  s += buf;
}

}  // namespace

std::string metricsCsvHeader() {
  std::string h = "kind,step,epoch";
  for (const auto& m : metricCatalog()) h += std::string(",") + m.id;
  return h;
}

std::string metricsCsvRow(const MetricRecord& r) {
  std::string s = kindName(r.kind);
  s += ',' + std::to_string(r.step) + ',' + std::to_string(r.epoch);
  for (const auto& m : metricCatalog()) {
    if (m.whole)
      s += ',' + std::to_string(r.*m.whole);
    else
      put(s, r.*m.real);
  }
  return s;
}

std::optional<MetricsCsvColumns> metricsCsvColumns(const std::string& header) {
  std::vector<std::string> names;
  std::stringstream in(header);
  std::string cell;
  while (std::getline(in, cell, ',')) names.push_back(cell);
  if (names.size() < 3 || names[0] != "kind" || names[1] != "step" || names[2] != "epoch") return std::nullopt;
  MetricsCsvColumns c;
  const auto& catalog = metricCatalog();
  for (size_t i = 3; i < names.size(); ++i) {
    int index = -1;
    for (size_t k = 0; k < catalog.size(); ++k)
      if (names[i] == catalog[k].id) index = static_cast<int>(k);
    c.catalogIndex.push_back(index);
  }
  return c;
}

bool parseMetricsCsvRow(const std::string& line, MetricRecord& r) {
  static const MetricsCsvColumns current = *metricsCsvColumns(metricsCsvHeader());
  return parseMetricsCsvRow(line, r, current);
}

bool parseMetricsCsvRow(const std::string& line, MetricRecord& r, const MetricsCsvColumns& columns) {
  std::vector<std::string> f;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) f.push_back(cell);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  const auto& catalog = metricCatalog();
  if (f.size() != 3 + columns.catalogIndex.size()) return false;
  try {
    if (f[0] == "train")
      r.kind = RecordKind::Train;
    else if (f[0] == "eval")
      r.kind = RecordKind::Eval;
    else if (f[0] == "lr_change")
      r.kind = RecordKind::LrChange;
    else if (f[0] == "nonfinite")
      r.kind = RecordKind::NonFinite;
    else if (f[0] == "rollback")
      r.kind = RecordKind::Rollback;
    else if (f[0] == "early_stop")
      r.kind = RecordKind::EarlyStop;
    else if (f[0] == "oom_backoff")
      r.kind = RecordKind::OomBackoff;
    else if (f[0] == "unfreeze")
      r.kind = RecordKind::Unfreeze;
    else
      return false;
    size_t used = 0;
    r.step = std::stoll(f[1], &used);
    if (used != f[1].size()) return false;
    r.epoch = std::stoll(f[2], &used);
    if (used != f[2].size()) return false;
    for (size_t i = 0; i < columns.catalogIndex.size(); ++i) {
      if (columns.catalogIndex[i] < 0) continue;
      const MetricSpec& m = catalog[static_cast<size_t>(columns.catalogIndex[i])];
      const std::string& v = f[3 + i];
      if (m.whole) {
        r.*m.whole = std::stoll(v, &used);
      } else if (v.empty()) {
        r.*m.real = MetricRecord::kNone;
        continue;
      } else {
        r.*m.real = std::stod(v, &used);
      }
      if (used != v.size()) return false;
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace studio
