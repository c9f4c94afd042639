// training-studio-cli: the engine without a window.
//   train (--preset NAME | --config FILE) [--set key=value ...] [--out DIR]
//   resume RUN_DIR
//   continue RUN_DIR --epochs N [--schedule restart|constant] [--lr X] [--set schedule.key=value ...]
//   fork RUN_DIR [--from best|last|step-N] [--set key=value ...] [--out DIR]
//   lr-find (--preset NAME | --config FILE) [--set key=value ...] [--min A] [--max B] [--steps N] [--out DIR]
//   queue add (--preset NAME | --config FILE) [--set key=value ...] [--grid key=v1,v2 ...] [--queue FILE]
//   queue list [--queue FILE]
//   queue run [--queue FILE]
//   summary (--preset NAME | --config FILE) [--set key=value ...]
//   presets
//   export RUN_DIR --out DIR [--which auto|best|last|ema] [--format torch|onnx] [--quantize int8]
//   search (--preset NAME | --config FILE | --resume STUDY_DIR) --space key=... [--metric M] [--trials N] ...
//   audit (--preset NAME | --config FILE) [--set key=value ...] [--folds 5] [--out DIR] | audit --resume DIR
//   predict RUN_DIR|EXPORT_DIR --input FILE|FOLDER|TABLE.csv [--which ...] [--top-k 5] [--tta flip] [--out F]
//   label --suggest RUN_DIR --data FOLDER [--out order.csv] [--strategy least-confidence|margin|entropy]
// Exit status: 0 success, 2 invalid settings or input files, 1 other failures.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <sys/prctl.h>
#include <unistd.h>

#include "cli_audit.h"
#include "cli_commands.h"
#include "cli_label.h"
#include "cli_predict.h"
#include "cli_progress.h"
#include "cli_search.h"
#include "studio/devices.h"
#include "studio/log.h"
#include "studio/metric_record.h"
#include "studio/report_lines.h"
#include "studio/session.h"

namespace {

std::atomic<int> g_interrupts{0};
// The interrupts the sessions have acted on, across them all (main thread
// only). A signal that lands between two sessions of one command (an audit's
// folds, a queue's items) is counted while the next is being set up: that one
// must see it, not take it as already handled.
int g_interruptsActedOn = 0;
// Until a session runs, nothing is recorded that a stop could save: a signal
// quits at once (reading settings from a FIFO, loading a queue, exporting),
// with 128 + its number as a shell reports it. std::signal's handlers restart
// an interrupted open(), so only exiting in the handler ends such a wait.
std::atomic<bool> g_sessionRuns{false};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
// --report: the run's progress as lines for the program that started this
// one (studio/report_lines.h; the window's multi-process runs read rank 0's).
bool g_report = false;

// A search runner's trial whose runner died (STUDIO_STOP_WITH_PARENT): the
// kernel sends the parent-death signal each time the trial passes from one
// exiting thread of the dead runner to the next, so it may come several
// times; it stops the run once, and never counts as a second Ctrl-C.
std::atomic<bool> g_parentGone{false};

void onParentGone(int signal) {
  if (!g_sessionRuns.load()) std::_Exit(128 + signal);  // async-signal-safe
  g_parentGone.store(true);
}

void onInterrupt(int signal) {
  if (!g_sessionRuns.load()) std::_Exit(128 + signal);  // async-signal-safe
  g_interrupts.fetch_add(1);
}

int runSession(studio::Session& session) {
  studio::CliProgress progress(stdout);
  // Under torchrun rank 0 reports the run; the others say only how they ended.
  const char* rankText = std::getenv("RANK");
  const bool quiet = rankText && std::getenv("WORLD_SIZE") && std::string(rankText) != "0";
  const bool reporting = g_report && !quiet;
  studio::ReportWriter report(stdout);
  // From here a first signal stops the run with a checkpoint (through its
  // set-up too: loading the data checks for it), a second quits at once.
  bool parentStop = false;
  g_sessionRuns.store(true);
  for (;;) {
    const bool done = session.wait(std::chrono::milliseconds(100));
    if (reporting) report.progress(session.progress());
    studio::MetricRecord r;
    while (session.pollMetric(r)) {
      if (reporting)
        report.record(r);
      else if (!quiet)
        progress.record(r);
    }
    if (done) break;
    if (g_parentGone.load() && !parentStop) {
      parentStop = true;
      session.stop();
    }
    const int interrupts = g_interrupts.load();
    if (interrupts != g_interruptsActedOn) {
      g_interruptsActedOn = interrupts;
      if (interrupts == 1) {
        std::fprintf(stderr,
                     "\ninterrupted: stopping after this step and saving a checkpoint "
                     "(press Ctrl-C again to quit at once)\n");
        session.stop();
      } else {
        std::_Exit(130);
      }
    }
    if (!quiet && !reporting) progress.update(session.progress());
  }
  const studio::RunSummary s = session.summary();
  if (reporting) report.end(studio::statusName(s.status));
  if (s.rank > 0) {
    std::fprintf(stderr, "rank %d of %d: %s%s%s\n", s.rank, s.worldSize, studio::statusName(s.status).c_str(),
                 s.error.empty() ? "" : ": ", s.error.c_str());
  } else {
    progress.finish(s);
  }
  if (s.status == studio::RunStatus::failed) return s.badInput ? 2 : 1;
  return 0;
}

int cliMain(int argc, char** argv) {
  CLI::App app{"Training Studio, headless: train PyTorch models with LibTorch"};
  // The version, and whether the GPU side is loaded (engine/src/cuda/cuda_side.h).
  app.set_version_flag("--version", [] {
    return std::string("training-studio-cli ") + STUDIO_VERSION + "\n" + studio::cudaSideStatus();
  });
  app.require_subcommand(1);
  app.add_flag("--report", g_report, "Progress as tab-separated lines for a program that runs this one")->group("");

  studio::cli::TrainCommands runs(app);
  studio::cli::ProbeCommands probes(app);
  studio::cli::QueueCommand queue(app);
  studio::cli::SummaryCommand summary(app);
  studio::cli::ExportCommand exportCommand(app);
  studio::PredictCommand predict(app);
  studio::cli::SearchCommand search(app);
  studio::cli::AuditCommand audit(app);
  studio::cli::LabelCommand label(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  // A search runner's trial (STUDIO_STOP_WITH_PARENT=<its pid>): the run
  // stops with a checkpoint when the runner dies however it dies (SIGHUP from
  // the kernel), so that the restarted runner resumes it.
  if (const char* parent = std::getenv("STUDIO_STOP_WITH_PARENT")) {
    std::signal(SIGHUP, onParentGone);
    ::prctl(PR_SET_PDEATHSIG, SIGHUP);
    // Its report lines then go nowhere: a write must fail, not kill the run
    // before it saved its checkpoint.
    std::signal(SIGPIPE, SIG_IGN);
    if (::getppid() != std::atoi(parent)) onParentGone(SIGHUP);
  }
  studio::log::setConsoleLevel("warn");

  try {
    if (summary.chosen()) return summary.run();
    if (probes.chosen()) return probes.run(runSession);
    if (queue.chosen()) return queue.run(runSession);
    if (predict.chosen()) return predict.run();
    if (search.chosen()) return search.run();
    if (audit.chosen()) {
      // Folds at once in processes of their own: while they run a stop is
      // theirs to save, and this process passes it on (a first signal is
      // counted, not fatal); after them signals quit at once again.
      studio::ParallelStops stops;
      stops.requested = [] {
        g_sessionRuns.store(true);
        return g_interrupts.load() > 0 || g_parentGone.load();
      };
      stops.ended = [] { g_sessionRuns.store(false); };
      return audit.run(runSession, stops);
    }
    if (exportCommand.chosen()) return exportCommand.run();
    if (label.chosen()) return label.run();
    return runs.run(runSession);
  } catch (const studio::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

// The process ends without the static destructors of the libraries it loaded.
// LibTorch's take about 0.1 s at every exit: deregistering its thousands of
// operators one by one, unregistering CUDA's kernel images (paging the CUDA
// libraries in to do so), dropping oneDNN's pattern tables. On the 2-core VM
// a 10-step run went from 0.97 to 0.80 s (medians of 12 runs alternating the
// two binaries) and `--version` from 0.35 to 0.29 s (6 runs each). Nothing is
// lost: when cliMain returns, the session and its threads are gone and every
// file it wrote is closed (its bytes are the kernel's; the run's files were
// also fsynced), and what stdio still buffers is flushed here. The sanitizer
// builds exit normally, for LeakSanitizer's check at exit.
int main(int argc, char** argv) {
  const int rc = cliMain(argc, argv);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if !defined(STUDIO_SANITIZED)
  std::_Exit(rc);
#endif
  return rc;
}
