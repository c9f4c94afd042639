#include "studio/metric_record.h"

#include <cstdio>
#include <sstream>
#include <vector>

#include "studio/metric_catalog.h"

namespace studio {
namespace {

const char* kindName(RecordKind k) {
  switch (k) {
    case RecordKind::Train: return "train";
    case RecordKind::Eval: return "eval";
    case RecordKind::LrChange: return "lr_change";
    case RecordKind::NonFinite: return "nonfinite";
    case RecordKind::Rollback: return "rollback";
    case RecordKind::EarlyStop: return "early_stop";
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

bool parseMetricsCsvRow(const std::string& line, MetricRecord& r) {
  std::vector<std::string> f;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) f.push_back(cell);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  const auto& catalog = metricCatalog();
  if (f.size() != 3 + catalog.size()) return false;
  try {
    if (f[0] == "train") r.kind = RecordKind::Train;
    else if (f[0] == "eval") r.kind = RecordKind::Eval;
    else if (f[0] == "lr_change") r.kind = RecordKind::LrChange;
    else if (f[0] == "nonfinite") r.kind = RecordKind::NonFinite;
    else if (f[0] == "rollback") r.kind = RecordKind::Rollback;
    else if (f[0] == "early_stop") r.kind = RecordKind::EarlyStop;
    else return false;
    size_t used = 0;
    r.step = std::stoll(f[1], &used);
    if (used != f[1].size()) return false;
    r.epoch = std::stoll(f[2], &used);
    if (used != f[2].size()) return false;
    for (size_t i = 0; i < catalog.size(); ++i) {
      const std::string& v = f[3 + i];
      if (catalog[i].whole) {
        r.*catalog[i].whole = std::stoll(v, &used);
      } else if (v.empty()) {
        r.*catalog[i].real = MetricRecord::kNone;
        continue;
      } else {
        r.*catalog[i].real = std::stod(v, &used);
      }
      if (used != v.size()) return false;
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace studio
