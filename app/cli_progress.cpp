#include "cli_progress.h"

#include <cmath>

#include <unistd.h>

#include "studio/figure_words.h"
#include "studio/rate_text.h"

namespace studio {

std::string formatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long t = std::lround(s);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

CliProgress::CliProgress(std::FILE* out) : m_out(out), m_tty(isatty(fileno(out)) != 0) {
  m_lastLine = std::chrono::steady_clock::now();
}

void CliProgress::clearLine() {
  if (m_tty && m_drawn) std::fprintf(m_out, "\r\033[K");
  m_drawn = false;
}

void CliProgress::record(const MetricRecord& r) {
  if (r.kind == RecordKind::Train) {
    m_loss = r.trainLoss;
  } else if (r.kind == RecordKind::Eval) {
    clearLine();
    std::fprintf(m_out, "step %lld (epoch %lld): eval %s\n", static_cast<long long>(r.step),
                 static_cast<long long>(r.epoch), evalRecordWords(r).c_str());
  } else if (r.kind == RecordKind::LrChange) {
    clearLine();
    std::fprintf(m_out, "step %lld: learning rate set to %g\n", static_cast<long long>(r.step), r.lr);
  } else if (r.kind == RecordKind::NonFinite) {
    clearLine();
    std::fprintf(m_out, "step %lld: the loss or gradients are not finite (loss %g); the step was not applied\n",
                 static_cast<long long>(r.step), r.trainLoss);
  } else if (r.kind == RecordKind::EarlyStop) {
    clearLine();
    std::fprintf(m_out, "step %lld: early stop (train.early_stopping)\n", static_cast<long long>(r.step));
  } else if (r.kind == RecordKind::OomBackoff) {
    clearLine();
    std::fprintf(m_out, "step %lld: out of memory; going on with micro-batches of %lld (memory.oom_backoff)\n",
                 static_cast<long long>(r.step), static_cast<long long>(r.microBatch));
  } else if (r.kind == RecordKind::Unfreeze) {
    clearLine();
    std::fprintf(m_out, "step %lld: layers unfrozen (train.finetune)\n", static_cast<long long>(r.step));
  } else if (r.kind == RecordKind::Rollback) {
    clearLine();
    std::fprintf(m_out, "rolled back to the checkpoint of step %lld; learning rate now %g\n",
                 static_cast<long long>(r.step), r.lr);
  }
}

void CliProgress::update(const Progress& p) {
  // A log without a terminal has the evaluation's result line; its progress
  // is for the bar.
  const bool evaluating = p.phase.rfind("evaluating", 0) == 0;
  if (!p.phase.empty() && (m_tty || !evaluating)) {
    // Before training: reading, decoding, moving the data; then evaluations.
    char count[64] = "";
    if (p.phaseTotal > 0)
      std::snprintf(count, sizeof count, " %lld/%lld", static_cast<long long>(p.phaseDone),
                    static_cast<long long>(p.phaseTotal));
    const double frac = p.phaseTotal > 0 ? static_cast<double>(p.phaseDone) / static_cast<double>(p.phaseTotal) : 0;
    if (m_tty) {
      const int width = 30, filled = static_cast<int>(frac * width);
      std::string bar = "[" + std::string(static_cast<size_t>(filled), '#') +
                        std::string(static_cast<size_t>(width - filled), '.') + "]";
      std::fprintf(m_out, "\r\033[K%s %s%s", bar.c_str(), p.phase.c_str(), count);
      std::fflush(m_out);
      m_drawn = true;
    } else if (p.phase != m_phase || std::chrono::steady_clock::now() - m_lastLine > std::chrono::seconds(5)) {
      std::fprintf(m_out, "%s%s\n", p.phase.c_str(), count);
      std::fflush(m_out);
      m_lastLine = std::chrono::steady_clock::now();
    }
    m_phase = p.phase;
    return;
  }
  if (!m_phase.empty()) {
    clearLine();
    m_phase.clear();
  }
  if (p.totalSteps <= 0) return;
  const double frac = static_cast<double>(p.step) / static_cast<double>(p.totalSteps);
  const double eta = p.step > 0 && p.wallSeconds > 0
                         ? p.wallSeconds / static_cast<double>(p.step) * static_cast<double>(p.totalSteps - p.step)
                         : NAN;
  char loss[32] = "-", speed[32] = "-";
  if (std::isfinite(m_loss)) std::snprintf(loss, sizeof loss, "%.4f", m_loss);
  if (p.samplesPerSecond > 0) std::snprintf(speed, sizeof speed, "%s", rateText(p.samplesPerSecond).c_str());
  char status[200];
  std::snprintf(status, sizeof status, "%3.0f%% step %lld/%lld epoch %lld loss %s %s samples/s ETA %s%s", 100.0 * frac,
                static_cast<long long>(p.step), static_cast<long long>(p.totalSteps), static_cast<long long>(p.epoch),
                loss, speed, formatDuration(eta).c_str(), p.state == SessionState::Paused ? " (paused)" : "");
  if (m_tty) {
    const int width = 30;
    const int filled = static_cast<int>(frac * width);
    std::string bar = "[" + std::string(static_cast<size_t>(filled), '#') +
                      std::string(static_cast<size_t>(width - filled), '.') + "]";
    std::fprintf(m_out, "\r\033[K%s %s", bar.c_str(), status);
    std::fflush(m_out);
    m_drawn = true;
  } else if (std::chrono::steady_clock::now() - m_lastLine > std::chrono::seconds(5)) {
    std::fprintf(m_out, "%s\n", status);
    std::fflush(m_out);
    m_lastLine = std::chrono::steady_clock::now();
  }
}

void CliProgress::finish(const RunSummary& s) {
  clearLine();
  std::fprintf(m_out, "\nrun %s: %s\n", statusName(s.status).c_str(), s.runDir.c_str());
  if (!s.error.empty()) std::fprintf(m_out, "  error:           %s\n", s.error.c_str());
  std::fprintf(m_out, "  device:          %s\n", s.device.c_str());
  std::fprintf(m_out, "  steps:           %lld of %lld (%lld epochs)\n", static_cast<long long>(s.steps),
               static_cast<long long>(s.totalSteps), static_cast<long long>(s.epochs));
  // The task's figures, the one it is judged by first (studio/figure_words.h).
  if (s.task) {
    const TaskKind task = *s.task;
    if (!s.test.figures.empty())
      std::fprintf(m_out, "  test:            %s\n", taskFigureWords(task, s.test.figures).c_str());
    if (!s.test.ema.empty()) std::fprintf(m_out, "  EMA weights:     %s\n", taskFigureWords(task, s.test.ema).c_str());
    const std::string best = taskScoreWords(task, s.bestEval);
    if (!best.empty()) std::fprintf(m_out, "  best eval:       %s\n", best.c_str());
  }
  if (std::isfinite(s.finalTrainLoss)) std::fprintf(m_out, "  final train loss: %.4f\n", s.finalTrainLoss);
  if (std::isfinite(s.samplesPerSecond))
    std::fprintf(m_out, "  samples/s:       %s\n", rateText(s.samplesPerSecond).c_str());
  if (s.nonfinite.skippedSteps > 0)
    std::fprintf(m_out, "  skipped steps:   %lld\n", static_cast<long long>(s.nonfinite.skippedSteps));
  if (s.nonfinite.steps > 0)
    std::fprintf(m_out, "  non-finite steps: %lld (rollbacks: %lld)\n", static_cast<long long>(s.nonfinite.steps),
                 static_cast<long long>(s.nonfinite.rollbacks));
  if (!s.earlyStopping.reason.empty()) std::fprintf(m_out, "  early stop:      %s\n", s.earlyStopping.reason.c_str());
  if (s.device.rfind("cuda", 0) == 0 && !s.stepper.cudaGraphs.empty())
    std::fprintf(m_out, "  CUDA graphs:     %s\n", s.stepper.cudaGraphs.c_str());
  std::fprintf(m_out, "  wall time:       %s (%.1f s)\n", formatDuration(s.wallSeconds).c_str(), s.wallSeconds);
  std::fprintf(m_out, "  time spent:      set-up %.2f s, training %.2f s, evaluation %.2f s, writing %.2f s\n",
               s.seconds.setup, s.seconds.train, s.seconds.eval, s.seconds.write);
  std::fflush(m_out);
}

PhaseBar::PhaseBar(const char* phase) {
  m_p.state = SessionState::Running;
  m_p.phase = phase;
}

std::function<bool(int64_t, int64_t)> PhaseBar::progress() {
  return [this](int64_t done, int64_t total) {
    m_p.phaseDone = done;
    m_p.phaseTotal = total;
    m_bar.update(m_p);
    return true;
  };
}

}  // namespace studio
