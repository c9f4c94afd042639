#include "studio/metric_record.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace studio {
namespace {

const char* kindName(RecordKind k) {
  switch (k) {
    case RecordKind::Train: return "train";
    case RecordKind::Eval: return "eval";
    case RecordKind::LrChange: return "lr_change";
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

double get(const std::string& f) { return f.empty() ? MetricRecord::kNone : std::stod(f); }

}  // namespace

std::string metricsCsvHeader() {
  return "kind,step,epoch,wall_s,train_loss,lr,grad_norm,loss_scale,skipped_steps,samples_per_s,"
         "step_ms,mem_allocated_mib,mem_reserved_mib,mem_peak_mib,eval_loss,eval_accuracy";
}

std::string metricsCsvRow(const MetricRecord& r) {
  std::string s = kindName(r.kind);
  s += ',' + std::to_string(r.step) + ',' + std::to_string(r.epoch);
  put(s, r.wallSeconds);
  put(s, r.trainLoss);
  put(s, r.lr);
  put(s, r.gradNorm);
  put(s, r.lossScale);
  s += ',' + std::to_string(r.skippedSteps);
  put(s, r.samplesPerSecond);
  put(s, r.stepMillis);
  put(s, r.memAllocatedMiB);
  put(s, r.memReservedMiB);
  put(s, r.memPeakMiB);
  put(s, r.evalLoss);
  put(s, r.evalAccuracy);
  return s;
}

bool parseMetricsCsvRow(const std::string& line, MetricRecord& r) {
  std::vector<std::string> f;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) f.push_back(cell);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  if (f.size() != 16) return false;
  try {
    if (f[0] == "train") r.kind = RecordKind::Train;
    else if (f[0] == "eval") r.kind = RecordKind::Eval;
    else if (f[0] == "lr_change") r.kind = RecordKind::LrChange;
    else return false;
    r.step = std::stoll(f[1]);
    r.epoch = std::stoll(f[2]);
    r.wallSeconds = get(f[3]);
    r.trainLoss = get(f[4]);
    r.lr = get(f[5]);
    r.gradNorm = get(f[6]);
    r.lossScale = get(f[7]);
    r.skippedSteps = std::stoll(f[8]);
    r.samplesPerSecond = get(f[9]);
    r.stepMillis = get(f[10]);
    r.memAllocatedMiB = get(f[11]);
    r.memReservedMiB = get(f[12]);
    r.memPeakMiB = get(f[13]);
    r.evalLoss = get(f[14]);
    r.evalAccuracy = get(f[15]);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace studio
