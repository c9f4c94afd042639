#pragma once
// The CLI's progress display: a redrawn bar with ETA, loss and samples/s on a
// terminal, plain lines every few seconds otherwise.
// Thread: the CLI's main thread.

#include <chrono>
#include <cstdio>
#include <functional>
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

// A phase's bar on stderr ("predicting 12/48") for work that reports
// (done, total), as predict and label do: progress() to hand it, then
// endLine() once the work returned.
class PhaseBar {
 public:
  explicit PhaseBar(const char* phase);
  std::function<bool(int64_t done, int64_t total)> progress();
  void endLine() { m_bar.endLine(); }

 private:
  CliProgress m_bar{stderr};
  Progress m_p;
};

std::string formatDuration(double seconds);

}  // namespace studio
