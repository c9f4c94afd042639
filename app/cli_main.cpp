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
// Exit status: 0 success, 2 invalid settings or input files, 1 other failures.
#include <CLI/CLI.hpp>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include <sys/prctl.h>
#include <unistd.h>

#include "cli_audit.h"
#include "cli_predict.h"
#include "cli_progress.h"
#include "cli_search.h"
#include "cli_settings.h"
#include "studio/dataset_info.h"
#include "studio/log.h"
#include "studio/metric_record.h"
#include "studio/model_kinds.h"
#include "studio/model_summary.h"
#include "studio/report_lines.h"
#include "studio/run_layout.h"
#include "studio/run_queue.h"
#include "studio/session.h"
#include "studio/settings_schema.h"
#include "studio/sha256.h"
#include "studio/train_config.h"

namespace {

using studio::cli::kNamesSomething;
using studio::cli::SettingsSource;

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
  if (reporting) report.end(s.status);
  if (s.rank > 0) {
    std::fprintf(stderr, "rank %d of %d: %s%s%s\n", s.rank, s.worldSize, s.status.c_str(), s.error.empty() ? "" : ": ",
                 s.error.c_str());
  } else {
    progress.finish(s);
  }
  if (s.status == "failed") return s.badInput ? 2 : 1;
  return 0;
}

void noteTorchScript(const studio::TrainConfig& c) {
  if (!studio::isModel(c.model.kind, studio::ModelFamily::torchscript)) return;
  std::string sha = "unreadable";
  try {
    sha = studio::sha256OfFile(c.model.path);
  } catch (const std::exception&) {
  }
  std::fprintf(stderr, "note: model.path %s is TorchScript: loading it runs the code in it (SHA-256 %s)\n",
               c.model.path.c_str(), sha.c_str());
}

std::string joinCounts(const std::vector<int64_t>& v) {
  int64_t total = 0;
  for (int64_t x : v) total += x;
  return std::to_string(total);
}

int printSummary(const studio::TrainConfig& c) {
  const studio::DatasetDescription d = studio::describeDataset(c);
  std::printf("data (%s): %s per example, %zu classes\n", d.format.name().c_str(), d.input.text().c_str(),
              d.classNames.size());
  // A detector's counts are its boxes (crowds left out, as training leaves them).
  if (d.task == studio::TaskKind::detection) std::printf("  boxes of each split and class:\n");
  std::printf("  training   %8s  from %s\n", joinCounts(d.trainCounts).c_str(), d.trainFrom.c_str());
  if (d.valSize() > 0) std::printf("  validation %8s  from %s\n", joinCounts(d.valCounts).c_str(), d.valFrom.c_str());
  std::printf("  test       %8s  from %s\n", joinCounts(d.testCounts).c_str(), d.testFrom.c_str());
  if (!c.data.corrections.empty())
    std::printf("  data.corrections: %lld removed, %lld relabelled (%s; your files are unchanged)\n",
                static_cast<long long>(d.correctionsRemoved), static_cast<long long>(d.correctionsRelabelled),
                c.data.corrections.c_str());
  std::printf("  %-24s %10s %10s %10s\n", "class", "training", "validation", "test");
  for (size_t k = 0; k < d.classNames.size(); ++k)
    std::printf("  %-24s %10lld %10lld %10lld\n", d.classNames[k].c_str(), static_cast<long long>(d.trainCounts[k]),
                static_cast<long long>(d.valCounts[k]), static_cast<long long>(d.testCounts[k]));
  std::printf("\n%s", studio::formatModelSummary(studio::summarizeModel(c)).c_str());
  return 0;
}

void printQueue(const std::vector<studio::QueueItem>& items, const std::string& file) {
  if (items.empty()) {
    std::printf("queue %s is empty\n", file.c_str());
    return;
  }
  std::printf("%4s  %-8s %-40s %s\n", "id", "status", "run", "folder");
  for (const auto& i : items) {
    const std::string what = i.label.empty() ? i.config.name : i.label;
    std::printf("%4lld  %-8s %-40s %s\n", static_cast<long long>(i.id), i.status.c_str(), what.c_str(),
                i.runDir.empty() ? "-" : i.runDir.c_str());
    if (!i.error.empty()) std::printf("      error: %s\n", i.error.c_str());
  }
}

// Runs the queue's items one after another: first one a crash or Ctrl-C
// left running (resumed from its checkpoint), then the queued ones in order.
int runQueue(const std::string& file) {
  studio::QueuePass pass(file);
  while (const std::optional<studio::QueueItem> next = pass.next()) {
    const studio::QueueItem& item = *next;
    const std::string what = item.label.empty() ? item.config.name : item.label;
    studio::Session session;
    try {
      if (studio::queueItemResumes(item)) {
        std::fprintf(stderr, "queue item %lld (%s): resuming %s\n", static_cast<long long>(item.id), what.c_str(),
                     item.runDir.c_str());
        session.resume(item.runDir);
      } else {
        if (!item.runDir.empty())
          std::fprintf(stderr, "queue item %lld: %s has no checkpoint to resume from; starting it again\n",
                       static_cast<long long>(item.id), item.runDir.c_str());
        session.start(item.config);
        std::fprintf(stderr, "queue item %lld (%s): started %s\n", static_cast<long long>(item.id), what.c_str(),
                     session.progress().runDir.c_str());
      }
    } catch (const std::exception& e) {
      pass.notStarted(item, e.what());
      std::fprintf(stderr, "queue item %lld failed to start: %s\n", static_cast<long long>(item.id), e.what());
      continue;
    }
    pass.started(item, session.progress().runDir);
    runSession(session);
    const studio::RunSummary s = session.summary();
    if (!pass.ended(item, s.status, s.error)) {
      std::fprintf(stderr, "queue stopped; `training-studio-cli queue run --queue %s` resumes item %lld\n",
                   file.c_str(), static_cast<long long>(item.id));
      return 130;
    }
  }
  std::printf("\nqueue %s: %d run(s) this time, %d failed\n", file.c_str(), pass.ran(), pass.failed());
  printQueue(studio::loadQueue(file), file);
  return pass.failed() > 0 ? 1 : 0;
}

int cliMain(int argc, char** argv) {
  CLI::App app{"Training Studio, headless: train PyTorch models with LibTorch"};
  app.set_version_flag("--version", std::string("training-studio-cli ") + STUDIO_VERSION);
  app.require_subcommand(1);
  app.add_flag("--report", g_report, "Progress as tab-separated lines for a program that runs this one")->group("");

  SettingsSource trainSettings, summarySettings;
  std::string outDir;
  auto* train = app.add_subcommand("train", "Start a new run");
  trainSettings.addTo(train);
  train->add_option("--out", outDir, "Folder for run folders (output.dir)")->check(kNamesSomething);

  std::string runDir;
  auto* resume = app.add_subcommand("resume", "Continue a stopped run from its last checkpoint");
  resume->add_option("run_dir", runDir, "The run folder")->required();

  studio::ContinueOptions more;
  std::string continueDir;
  auto* cont = app.add_subcommand("continue", "Train a finished, early-stopped or stopped run further, in its folder");
  cont->add_option("run_dir", continueDir, "The run folder")->required();
  cont->add_option("--epochs", more.epochs, "How many more epochs")->required();
  cont->add_option("--schedule", more.schedule,
                   "restart: the schedule again over the new epochs (default); constant: one learning rate");
  cont->add_option("--lr", more.lr,
                   "The learning rate (restart: its base; constant: the rate; default: optimizer.lr, or the run's "
                   "last learning rate for constant)");
  cont->add_option("--set", more.scheduleOverrides, "Edit the restarted schedule: schedule.key=value (repeatable)");

  studio::ForkOptions forkOptions;
  std::string forkDir;
  auto* fork = app.add_subcommand("fork", "Start a new run from a run's checkpoint with edited settings");
  fork->add_option("run_dir", forkDir, "The parent run folder")->required();
  fork->add_option("--from", forkOptions.from, "best, last (default) or step-N (with output.keep_checkpoints)");
  fork->add_option("--set", forkOptions.overrides, "Change a setting: dotted.key=value (repeatable)");
  fork->add_option("--out", forkOptions.outputDir, "Folder for the new run folder (default: beside the parent)")
      ->check(kNamesSomething);

  SettingsSource findSettings;
  studio::LrFindOptions find;
  auto* lrFind = app.add_subcommand("lr-find", "Learning-rate range test: the loss over exponentially growing rates");
  findSettings.addTo(lrFind);
  lrFind->add_option("--min", find.lrMin, "Lowest learning rate (default 1e-6)");
  lrFind->add_option("--max", find.lrMax, "Highest learning rate (default 1)");
  lrFind->add_option("--steps", find.steps, "Optimizer steps of the sweep (default 100)");
  lrFind->add_option("--out", outDir, "Folder for run folders (output.dir)")->check(kNamesSomething);

  SettingsSource batchSettings;
  studio::BatchFindOptions batchFind;
  auto* batchFindCmd =
      app.add_subcommand("batch-find", "The largest micro-batch whose training step fits in the device's memory");
  batchSettings.addTo(batchFindCmd);
  batchFindCmd->add_option("--max", batchFind.maxBatch, "The largest micro-batch to try (default 65536)");
  batchFindCmd->add_option("--out", outDir, "Folder for run folders (output.dir)")->check(kNamesSomething);

  SettingsSource queueSettings;
  std::vector<std::string> grids;
  std::string queueFile = "runs/queue.json";
  auto* queue = app.add_subcommand("queue", "A queue of runs in a file, run one after another");
  queue->require_subcommand(1);
  auto* queueAdd = queue->add_subcommand("add", "Add runs: the settings, or a grid of values of some settings");
  queueSettings.addTo(queueAdd);
  queueAdd->add_option("--grid", grids, "A setting's values to try: key=v1,v2,... (repeatable: every combination)");
  auto* queueList = queue->add_subcommand("list", "Show the queue");
  auto* queueRun = queue->add_subcommand("run", "Run the queued runs one after another");
  for (auto* q : {queueAdd, queueList, queueRun})
    q->add_option("--queue", queueFile, "The queue file (default runs/queue.json)")->check(kNamesSomething);

  auto* summary = app.add_subcommand("summary", "Print the data's classes and splits and the model's layers");
  summarySettings.addTo(summary);

  app.add_subcommand("presets", "List the presets");

  std::string exportRun, exportOut;
  studio::ExportOptions exportOptions;
  auto* exp = app.add_subcommand("export", "Write a run's model, checkpoint, settings and evaluations to a folder");
  exp->add_option("run_dir", exportRun, "The run folder")->required();
  exp->add_option("--out", exportOut, "Destination folder")->required()->check(kNamesSomething);
  exp->add_option("--which", exportOptions.which,
                  "auto (default): the weights of the run's test figures (the best checkpoint's for a run with a "
                  "validation split, else the last); best or last checkpoint; or ema: the weights' moving average")
      ->check(CLI::IsMember({"auto", "best", "last", "ema"}));
  exp->add_option("--format", exportOptions.format,
                  "torch (default): the PyTorch files; onnx: model.onnx too, each file checked in the studio's Python "
                  "against the studio's own outputs on the run's test examples (ONNX Runtime for model.onnx)")
      ->check(CLI::IsMember({"torch", "onnx"}));
  exp->add_flag("--check", exportOptions.check, "With --format torch: check the PyTorch files in Python as well");
  exp->add_option("--opset", exportOptions.opset, "The ONNX opset (default 18)");
  exp->add_option("--tolerance", exportOptions.tolerance,
                  "The largest difference from the studio's outputs a file may show (default 1e-4)");
  exp->add_option("--quantize", exportOptions.quantize,
                  "none (default) or int8: model.int8.onnx by ONNX Runtime's static quantization, with its test "
                  "figure and CPU speed against model.onnx's")
      ->check(CLI::IsMember({"none", "int8"}));
  exp->add_option("--calibration", exportOptions.calibration,
                  "INT8's calibration: minmax (default), entropy or percentile")
      ->check(CLI::IsMember({"minmax", "entropy", "percentile"}));
  exp->add_option("--calibration-examples", exportOptions.calibrationExamples,
                  "Training examples INT8 is calibrated on (default 300)");
  exp->add_option("--max-drop", exportOptions.maxDrop,
                  "Points of the test figure INT8 may lose before the export says so (default 1)");

  studio::PredictCommand predict(app);
  studio::cli::SearchCommand search(app);
  studio::cli::AuditCommand audit(app);

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
    if (app.got_subcommand("presets")) {
      const std::string dir = studio::defaultPresetDir();
      for (const auto& name : studio::presetNames(dir)) std::printf("%s\n", name.c_str());
      return 0;
    }
    if (app.got_subcommand("summary")) {
      const studio::TrainConfig c = summarySettings.load();
      noteTorchScript(c);
      return printSummary(c);
    }
    if (app.got_subcommand("lr-find")) {
      studio::TrainConfig config = findSettings.load();
      if (!outDir.empty()) config.output.dir = outDir;
      noteTorchScript(config);
      studio::Session session;
      session.findLearningRate(config, find);
      const int rc = runSession(session);
      const studio::RunSummary s = session.summary();
      if (rc == 0 && std::isfinite(s.lrFind.suggestion)) {
        std::printf("learning-rate range test: %s\n", s.lrFind.end.c_str());
        std::printf("  suggested learning rate: %.3g (the smoothed loss falls fastest there)\n", s.lrFind.suggestion);
        std::printf("  lowest smoothed loss at: %.3g\n", s.lrFind.minimum);
        // The setting that acts under these settings' schedule: a cycle's
        // peak (OneCycle, cyclic) may go up to a tenth of the lowest loss's rate.
        const std::string target = studio::learningRateSetting(config);
        const bool peak = target != "optimizer.lr";
        std::printf("  use it: --set %s=%.3g\n", target.c_str(),
                    peak && s.lrFind.minimum / 10 > s.lrFind.suggestion ? s.lrFind.minimum / 10 : s.lrFind.suggestion);
      } else if (rc == 0) {
        std::printf("learning-rate range test: %s; too few steps to suggest a rate\n", s.lrFind.end.c_str());
      }
      return rc;
    }
    if (app.got_subcommand("batch-find")) {
      studio::TrainConfig config = batchSettings.load();
      if (!outDir.empty()) config.output.dir = outDir;
      noteTorchScript(config);
      studio::Session session;
      session.findBatchSize(config, batchFind);
      const int rc = runSession(session);
      const studio::RunSummary s = session.summary();
      if (rc == 0 && s.batchFind.largest > 0) {
        const long long effective = static_cast<long long>(config.train.batch_size) * config.train.accumulation_steps;
        std::printf("largest micro-batch that fits: %lld on %s", static_cast<long long>(s.batchFind.largest),
                    s.device.c_str());
        if (std::isfinite(s.batchFind.limitMiB)) std::printf(" (%.0f MiB)", s.batchFind.limitMiB);
        std::printf(
            "\n  for the effective batch of %lld: --set train.batch_size=%lld --set "
            "train.accumulation_steps=%lld\n",
            effective, static_cast<long long>(s.batchFind.micro), static_cast<long long>(s.batchFind.accumulation));
      }
      return rc;
    }
    if (app.got_subcommand("queue")) {
      if (queueFile.empty()) throw studio::ConfigFileError("--queue names no file (got \"\")");
      if (std::filesystem::is_directory(queueFile))
        throw studio::ConfigFileError("--queue " + queueFile + " is a folder; give the queue's JSON file");
      const auto parent = std::filesystem::path(queueFile).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      if (queue->got_subcommand("add")) {
        const auto added = studio::expandGrid(queueSettings.load(), grids);
        const auto items = studio::addToQueue(queueFile, added);
        std::printf("added %zu run(s) to %s\n", added.size(), queueFile.c_str());
        printQueue(items, queueFile);
        return 0;
      }
      if (queue->got_subcommand("list")) {
        printQueue(studio::loadQueue(queueFile), queueFile);
        return 0;
      }
      return runQueue(queueFile);
    }
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
    if (app.got_subcommand("export")) {
      const studio::ExportResult r = studio::exportRun(exportRun, exportOut, exportOptions);
      if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
      for (const auto& line : r.checks) std::printf("%s\n", line.c_str());
      std::printf("exported %s (%s checkpoint) to %s:", exportRun.c_str(), r.checkpoint.c_str(), exportOut.c_str());
      for (const auto& f : r.files) std::printf(" %s", std::filesystem::relative(f, exportOut).c_str());
      std::printf("\n");
      return 0;
    }
    studio::Session session;
    if (app.got_subcommand("resume")) {
      if (std::filesystem::is_regular_file(runDir + "/" + studio::run_files::kSettings))
        noteTorchScript(studio::loadConfigFile(runDir + "/" + studio::run_files::kSettings));
      session.resume(runDir);
      return runSession(session);
    }
    if (app.got_subcommand("continue")) {
      if (std::filesystem::is_regular_file(continueDir + "/" + studio::run_files::kSettings))
        noteTorchScript(studio::loadConfigFile(continueDir + "/" + studio::run_files::kSettings));
      session.continueRun(continueDir, more);
      return runSession(session);
    }
    if (app.got_subcommand("fork")) {
      if (std::filesystem::is_regular_file(forkDir + "/" + studio::run_files::kSettings))
        noteTorchScript(studio::loadConfigFile(forkDir + "/" + studio::run_files::kSettings));
      const std::string dir = session.fork(forkDir, forkOptions);
      std::fprintf(stderr, "forked %s (%s checkpoint) into %s\n", forkDir.c_str(), forkOptions.from.c_str(),
                   dir.c_str());
      return runSession(session);
    }
    studio::TrainConfig config = trainSettings.load();
    if (!outDir.empty()) config.output.dir = outDir;
    noteTorchScript(config);
    session.start(config);
    return runSession(session);
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
