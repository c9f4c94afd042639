// The --report line protocol: how training-studio-cli, started under torchrun
// by the window's process (src/launcher/torchrun.cpp), tells that process
// about its run. One line each, its key, a tab, its value:
//   studio-run <dir>, studio-total <steps>, studio-phase <text> <done> <total>,
//   studio-record <metrics.csv row>, studio-end <status>
// Under torchrun rank 0 reports the run; any other line on the output is
// the processes' own (logged by the reader as it is). Plain C++, header only:
// the CLI writes with ReportWriter, the launcher reads with parseReportLine.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "studio/metric_record.h"
#include "studio/session.h"

namespace studio {

enum class ReportKey { Run, Total, Phase, Record, End };

inline const char* reportKeyName(ReportKey k) {
  switch (k) {
    case ReportKey::Run:
      return "studio-run";
    case ReportKey::Total:
      return "studio-total";
    case ReportKey::Phase:
      return "studio-phase";
    case ReportKey::Record:
      return "studio-record";
    case ReportKey::End:
      return "studio-end";
  }
  return "";
}

struct ReportLine {
  ReportKey key;
  std::string value;  // the rest of the line after the key's tab
};

// One line of the output, without its line end: the report it is, or none
// (a line of the processes' own).
inline std::optional<ReportLine> parseReportLine(const std::string& line) {
  const auto tab = line.find('\t');
  if (tab == std::string::npos) return std::nullopt;
  const std::string key = line.substr(0, tab);
  for (ReportKey k : {ReportKey::Run, ReportKey::Total, ReportKey::Phase, ReportKey::Record, ReportKey::End})
    if (key == reportKeyName(k)) return ReportLine{k, line.substr(tab + 1)};
  return std::nullopt;
}

// The writing side: each change of the run's progress once, each record,
// and the end, one flushed line each.
class ReportWriter {
 public:
  explicit ReportWriter(std::FILE* out) : m_out(out) {}

  void progress(const Progress& p) {
    if (!p.runDir.empty() && p.runDir != m_dir) write(ReportKey::Run, m_dir = p.runDir);
    if (p.totalSteps != m_total) write(ReportKey::Total, std::to_string(m_total = p.totalSteps));
    const std::string phase = p.phase + "\t" + std::to_string(p.phaseDone) + "\t" + std::to_string(p.phaseTotal);
    if (phase != m_phase) write(ReportKey::Phase, m_phase = phase);
  }
  void record(const MetricRecord& r) { write(ReportKey::Record, metricsCsvRow(r)); }
  void end(const std::string& status) { write(ReportKey::End, status); }

 private:
  void write(ReportKey key, const std::string& value) {
    std::fputs(reportKeyName(key), m_out);
    std::fputc('\t', m_out);
    std::fputs(value.c_str(), m_out);
    std::fputc('\n', m_out);
    std::fflush(m_out);
  }

  std::FILE* m_out;
  std::string m_dir, m_phase;
  int64_t m_total = 0;
};

}  // namespace studio
