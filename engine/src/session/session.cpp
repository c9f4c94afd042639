#include "studio/session.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "dist/process_group.h"
#include "launcher/torchrun.h"
#include "run/run_lock.h"
#include "run/run_recorder.h"
#include "studio/log.h"
#include "train/heap_release.h"
#include "train/run_lineage.h"
#include "train/session_channel.h"
#include "train/trainer.h"

namespace studio {

const char* stateName(SessionState s) {
  switch (s) {
    case SessionState::Idle:
      return "idle";
    case SessionState::Starting:
      return "starting";
    case SessionState::Running:
      return "running";
    case SessionState::Paused:
      return "paused";
    case SessionState::Finished:
      return "finished";
    case SessionState::Stopped:
      return "stopped";
    case SessionState::Failed:
      return "failed";
  }
  return "idle";
}

namespace {
std::string listErrors(const std::vector<ConfigError>& errors, const std::string& source) {
  std::string text = source.empty() ? "invalid settings:" : "invalid settings in " + source + ":";
  for (const auto& x : errors) text += "\n  " + x.text();
  return text;
}

// Every entry point that takes settings refuses invalid ones first.
void requireValid(const TrainConfig& config) {
  auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors);
}

// Under torchrun: the process group (joined by the first run of the
// process), else nullptr.
ProcessGroup* ranksFor(const TrainConfig& config) {
  return joinProcessGroup(std::chrono::seconds(config.distributed.timeout_s));
}

// A new run folder: rank 0 makes it and the other ranks learn its name.
std::string newRunDir(const TrainConfig& config, ProcessGroup* ranks) {
  if (!ranks) return RunRecorder::createRunDir(config.output.dir, config.name);
  std::string dir;
  if (ranks->leader()) {
    try {
      dir = RunRecorder::createRunDir(config.output.dir, config.name);
    } catch (...) {
      ranks->shareText("run_dir", "");  // the others stop too
      throw;
    }
  }
  dir = ranks->shareText("run_dir", dir);
  if (dir.empty())
    throw InputError(ranks->describe() + ": rank 0 could not create the run folder under " + config.output.dir +
                     "; its output says why");
  return dir;
}
}  // namespace

InvalidSettings::InvalidSettings(std::vector<ConfigError> e, const std::string& source)
    : InputError(listErrors(e, source)), errors(std::move(e)) {}

struct Session::Impl {
  std::unique_ptr<SessionChannel> channel;
  std::thread thread;
  std::atomic<bool> done{false};
  std::mutex summaryMutex;
  RunSummary summary;
  std::mutex doneMutex;
  std::condition_variable doneCv;
  std::unique_ptr<RunLock> lock;  // held while the engine thread trains
  std::atomic<pid_t> child{-1};   // startProcesses: torchrun
  std::atomic<bool> childStopped{false};

  // The end of a run (on the thread that ran it): its state, its summary,
  // and done for wait().
  void publish(SessionChannel* ch, const RunSummary& s) {
    ch->state = finishedStatus(s.status)         ? SessionState::Finished
                : s.status == RunStatus::stopped ? SessionState::Stopped
                                                 : SessionState::Failed;
    {
      std::lock_guard<std::mutex> lock(summaryMutex);
      summary = s;
    }
    {
      std::lock_guard<std::mutex> lock(doneMutex);
      child = -1;
      done = true;
    }
    doneCv.notify_all();
  }

  // A session runs one run at a time; a finished one's thread is joined.
  void joinFinished() {
    if (!thread.joinable()) return;
    if (!done) throw std::logic_error("a session is already running; stop it first");
    thread.join();
  }

  void launch(TrainConfig cfg, std::string runDir, RunStart start, const StartOptions& options) {
    joinFinished();
    // Throws when another process trains there; under torchrun rank 0
    // holds it for all.
    const ProcessGroup* ranks = currentProcessGroup();
    if (!ranks || ranks->leader()) lock = std::make_unique<RunLock>(runDir);
    channel = std::make_unique<SessionChannel>(options.metricQueueCapacity);
    done = false;
    SessionChannel* ch = channel.get();
    {
      // Known from the start, so the front-end can show and select the run at once.
      std::lock_guard<std::mutex> lock(ch->textMutex);
      ch->runDir = runDir;
    }
    thread =
        std::thread([this, ch, cfg = std::move(cfg), runDir = std::move(runDir), start = std::move(start), options] {
          RunSummary s;
          {
            Trainer trainer(cfg, runDir, start, options, *ch);
            s = trainer.run();
          }
          // A probe's tries (batch-find's reach the memory's limit), its model
          // and its data are freed by now: their pages go back to the system,
          // not kept by the window that ran it.
          if (probes(start)) releaseFreeHeap();
          lock.reset();  // everything is written: another process may train here now
          publish(ch, s);
        });
  }
};

Session::Session() : m_impl(std::make_unique<Impl>()) {}

Session::~Session() {
  if (m_impl->thread.joinable()) {
    if (!m_impl->done) stop();
    m_impl->thread.join();
  }
}

void Session::start(const TrainConfig& config, const StartOptions& options) {
  requireValid(config);
  const std::string dir = newRunDir(config, ranksFor(config));
  m_impl->launch(config, dir, RunStart{}, options);
}

void Session::resume(const std::string& runDir, const StartOptions& options) {
  run_start::Resume again;
  const TrainConfig config = readResumableRun(runDir, "resume", &again.fromStart);
  ranksFor(config);
  m_impl->launch(config, runDir, again, options);
}

void Session::continueRun(const std::string& runDir, const ContinueOptions& more, const StartOptions& options) {
  auto [config, extend] = planContinue(runDir, more);
  ranksFor(config);
  m_impl->launch(config, runDir, extend, options);
}

void Session::findLearningRate(const TrainConfig& config, const LrFindOptions& find) {
  requireValid(config);
  if (!(find.lrMin > 0) || !(find.lrMax > find.lrMin) || !std::isfinite(find.lrMax)) {
    char got[96];  // %g: a rate of 1e-7 reads 1e-07, not std::to_string's 0.000000
    std::snprintf(got, sizeof got, "(got %g and %g)", find.lrMin, find.lrMax);
    throw InputError(std::string("lr-find needs 0 < --min < --max ") + got);
  }
  if (find.steps < 5 || find.steps > 100000)
    throw InputError("lr-find --steps must be between 5 and 100000 (got " + std::to_string(find.steps) + ")");
  if (!(find.beta >= 0 && find.beta < 1)) throw InputError("lr-find smoothing must be in [0, 1)");
  if (!(find.divergeFactor > 1)) throw InputError("lr-find --diverge must be > 1");
  launchProbe(config, "-lr-find", run_start::LrFind{find});
}

void Session::findBatchSize(const TrainConfig& config, const BatchFindOptions& find) {
  requireValid(config);
  if (find.maxBatch < 2 || find.maxBatch > (int64_t(1) << 24))
    throw InputError("batch-find --max must be between 2 and 16777216 (got " + std::to_string(find.maxBatch) + ")");
  launchProbe(config, "-batch-find", run_start::BatchFind{find});
}

// lr-find and batch-find: their own run folder, named after the settings'.
void Session::launchProbe(const TrainConfig& config, const std::string& suffix, const RunStart& from) {
  if (const auto e = RankEnvironment::read(); e && e->world > 1)
    throw InputError(suffix.substr(1) + " measures one process on one device: run it without torchrun (WORLD_SIZE=" +
                     std::to_string(e->world) + " is set)");
  TrainConfig c = config;
  c.name += suffix;
  const std::string dir = RunRecorder::createRunDir(c.output.dir, c.name);
  m_impl->launch(c, dir, from, {});
}

std::string Session::fork(const std::string& parentDir, const ForkOptions& fork, const StartOptions& options) {
  ForkPlan plan = planFork(parentDir, fork);
  const std::string dir = newRunDir(plan.config, ranksFor(plan.config));
  m_impl->launch(plan.config, dir, run_start::Fork{plan.checkpoint, plan.parent}, options);
  return dir;
}

void Session::startProcesses(const TrainConfig& config, const std::string& torchrun, const std::string& cli) {
  requireValid(config);
  const auto devices = processDevices(config.distributed.devices);
  if (devices.size() < 2)
    throw InputError("distributed.devices lists " + std::to_string(devices.size()) +
                     " device(s): a run in several processes needs at least 2");
  Impl& m = *m_impl;
  m.joinFinished();
  const TorchrunProcess process = startTorchrun(config, devices, torchrun, cli);
  m.child = process.pid;
  m.childStopped = false;
  m.channel = std::make_unique<SessionChannel>(StartOptions{}.metricQueueCapacity);
  m.done = false;
  SessionChannel* ch = m.channel.get();
  ch->device = process.device;
  log::info("started torchrun: " + std::to_string(devices.size()) + " processes on " + ch->device);
  m.thread = std::thread([this, ch, process] {
    Impl& m = *m_impl;
    m.publish(ch, followTorchrun(process, *ch, m.childStopped));
  });
}

namespace {
// Commands a run in several processes cannot take (only stop reaches them).
bool inProcesses(const pid_t child, const char* what) {
  if (child <= 0) return false;
  log::warn(std::string(what) +
            " applies to a run in the window's own process; a run in several processes can "
            "only be stopped (with a checkpoint)");
  return true;
}
}  // namespace

void Session::pause() {
  if (inProcesses(m_impl->child, "pause")) return;
  if (m_impl->channel) m_impl->channel->send({Command::Pause, 0});
}
void Session::resumeTraining() {
  if (m_impl->child > 0) return;  // never paused
  if (m_impl->channel) m_impl->channel->send({Command::Resume, 0});
}
void Session::stop() {
  {
    std::lock_guard<std::mutex> lock(m_impl->doneMutex);
    if (m_impl->child > 0) {
      // torchrun passes it on; each rank stops at the same step with a checkpoint.
      m_impl->childStopped = true;
      ::kill(m_impl->child, SIGTERM);
      return;
    }
  }
  if (m_impl->channel) m_impl->channel->send({Command::Stop, 0});
}
void Session::saveCheckpointNow() {
  if (inProcesses(m_impl->child, "save checkpoint now")) return;
  if (m_impl->channel) m_impl->channel->send({Command::SaveNow, 0});
}
bool Session::saveCheckpointAndWait(std::chrono::milliseconds timeout) {
  SessionChannel* ch = m_impl->channel.get();
  if (!ch || m_impl->done) return false;
  const int64_t before = ch->checkpointsSaved.load();
  ch->send({Command::SaveNow, 0});
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (ch->checkpointsSaved.load() == before) {
    if (m_impl->done || std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void Session::setLearningRate(double lr) {
  if (inProcesses(m_impl->child, "a learning-rate change")) return;
  if (m_impl->channel) m_impl->channel->send({Command::SetLr, lr});
}

bool Session::pollMetric(MetricRecord& out) { return m_impl->channel && m_impl->channel->metrics.try_dequeue(out); }

Progress Session::progress() const {
  Progress p;
  const SessionChannel* ch = m_impl->channel.get();
  if (!ch) return p;
  p.state = ch->state;
  p.step = ch->step;
  p.totalSteps = ch->totalSteps;
  p.epoch = ch->epoch;
  p.samplesPerSecond = ch->samplesPerSecond;
  p.wallSeconds = ch->wallSeconds;
  p.lastLoss = ch->lastLoss;
  p.droppedRecords = ch->dropped.load();
  p.stopping = ch->stopAsked && (p.state == SessionState::Starting || p.state == SessionState::Running ||
                                 p.state == SessionState::Paused);
  std::lock_guard<std::mutex> lock(const_cast<SessionChannel*>(ch)->textMutex);
  p.device = ch->device;
  p.runDir = ch->runDir;
  p.phase = ch->phase;
  p.phaseDone = ch->phaseDone;
  p.phaseTotal = ch->phaseTotal;
  return p;
}

bool Session::wait(std::chrono::milliseconds timeout) {
  if (!m_impl->thread.joinable()) return true;
  std::unique_lock<std::mutex> lock(m_impl->doneMutex);
  return m_impl->doneCv.wait_for(lock, timeout, [&] { return m_impl->done.load(); });
}

bool Session::finished() const { return m_impl->done; }

RunSummary Session::summary() const {
  std::lock_guard<std::mutex> lock(m_impl->summaryMutex);
  return m_impl->summary;
}

int64_t Session::droppedRecords() const { return m_impl->channel ? m_impl->channel->dropped.load() : 0; }

}  // namespace studio
