#pragma once
// The CLI's progress display: a redrawn bar with ETA, loss and samples/s on a
// terminal, plain lines every few seconds otherwise.
// Thread: the CLI's main thread.

#include <chrono>
#include <cstdio>
#include <string>

#include "studio/metric_record.h"
#include "studio/session.h"

namespace studio {

class CliProgress {
 public:
  explicit CliProgress(std::FILE* out);
  void record(const MetricRecord& r);  // each record drained from the session
  void update(const Progress& p);      // redraw (terminal) or maybe print a line
  void finish(const RunSummary& s);    // the closing summary
  void endLine() { clearLine(); }      // the bar's line cleared, for what follows

 private:
  void clearLine();
  std::FILE* m_out;
  bool m_tty;
  double m_loss = MetricRecord::kNone;
  std::chrono::steady_clock::time_point m_lastLine;
  bool m_drawn = false;
  std::string m_phase;
};

std::string formatDuration(double seconds);

}  // namespace studio
