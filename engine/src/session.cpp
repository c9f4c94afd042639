#include "studio/session.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dist/process_group.h"
#include "run/run_lineage.h"
#include "run/run_lock.h"
#include "run/run_recorder.h"
#include "studio/log.h"
#include "train/session_channel.h"
#include "train/trainer.h"

namespace studio {

const char* stateName(SessionState s) {
  switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Starting: return "starting";
    case SessionState::Running: return "running";
    case SessionState::Paused: return "paused";
    case SessionState::Finished: return "finished";
    case SessionState::Stopped: return "stopped";
    case SessionState::Failed: return "failed";
  }
  return "idle";
}

namespace {
std::string listErrors(const std::vector<ConfigError>& errors, const std::string& source) {
  std::string text = source.empty() ? "invalid settings:" : "invalid settings in " + source + ":";
  for (const auto& x : errors) text += "\n  " + x.text();
  return text;
}
}  // namespace

namespace {
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
  std::atomic<pid_t> child{-1};    // startProcesses: torchrun
  std::atomic<bool> childStopped{false};

  // The end of a run (on the thread that ran it): its state, its summary,
  // and done for wait().
  void publish(SessionChannel* ch, const RunSummary& s) {
    ch->state = s.status == "completed" || s.status == "early-stopped" ? SessionState::Finished
                : s.status == "stopped" ? SessionState::Stopped
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

  void launch(TrainConfig cfg, std::string runDir, RunStart start, const StartOptions& options) {
    if (thread.joinable()) {
      if (!done) throw std::logic_error("a session is already running; stop it first");
      thread.join();
    }
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
    thread = std::thread([this, ch, cfg = std::move(cfg), runDir = std::move(runDir), start = std::move(start), options] {
      RunSummary s;
      {
        Trainer trainer(cfg, runDir, start, options, *ch);
        s = trainer.run();
      }
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
  auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors);
  const std::string dir = newRunDir(config, ranksFor(config));
  m_impl->launch(config, dir, RunStart{}, options);
}

void Session::resume(const std::string& runDir, const StartOptions& options) {
  const TrainConfig config = readResumableRun(runDir, "resume");
  ranksFor(config);
  m_impl->launch(config, runDir, run_start::Resume{}, options);
}

void Session::continueRun(const std::string& runDir, const ContinueOptions& more, const StartOptions& options) {
  auto [config, extend] = planContinue(runDir, more);
  ranksFor(config);
  m_impl->launch(config, runDir, extend, options);
}

void Session::findLearningRate(const TrainConfig& config, const LrFindOptions& find) {
  auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors);
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
  auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors);
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

namespace {
// A run folder's summary.json as far as a front-end needs it.
RunSummary summaryFile(const std::string& runDir) {
  RunSummary s;
  s.runDir = runDir;
  std::ifstream in(runDir + "/summary.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) return s;
  auto num = [&](const char* k, double& into) {
    if (j.contains(k) && j[k].is_number()) into = j[k].get<double>();
  };
  s.status = j.value("status", "");
  s.error = j.value("error", "");
  s.device = j.value("device", "");
  s.steps = j.value("steps", int64_t(0));
  s.totalSteps = j.value("total_steps", int64_t(0));
  s.epochs = j.value("epochs", int64_t(0));
  s.worldSize = j.value("world_size", 1);
  num("test_accuracy", s.testAccuracy);
  num("test_loss", s.testLoss);
  num("best_eval_accuracy", s.bestEvalAccuracy);
  num("final_train_loss", s.finalTrainLoss);
  num("final_eval_loss", s.finalEvalLoss);
  num("samples_per_second", s.samplesPerSecond);
  num("wall_seconds", s.wallSeconds);
  return s;
}
}  // namespace

void Session::startProcesses(const TrainConfig& config, const std::string& torchrun, const std::string& cli) {
  auto errors = validate(config);
  if (!errors.empty()) throw InvalidSettings(errors);
  const auto devices = processDevices(config.distributed.devices);
  if (devices.size() < 2)
    throw InputError("distributed.devices lists " + std::to_string(devices.size()) +
                     " device(s): a run in several processes needs at least 2");
  Impl& m = *m_impl;
  if (m.thread.joinable()) {
    if (!m.done) throw std::logic_error("a session is already running; stop it first");
    m.thread.join();
  }
  // The settings for the CLI, in a file of their own.
  char path[] = "/tmp/training-studio-settings-XXXXXX.json";
  const int fd = ::mkstemps(path, 5);
  if (fd < 0) throw IoError(std::string("cannot write the settings for torchrun in /tmp: ") + std::strerror(errno));
  TrainConfig c = config;
  c.distributed.devices.clear();
  const bool cpu = devices.front() == "cpu";
  if (cpu) c.performance.device = "cpu";
  const std::string text = toJson(c).dump(2) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) throw IoError(std::string("cannot write the settings for torchrun to ") + path);
  std::vector<std::string> args{torchrun, "--standalone", "--nproc-per-node", std::to_string(devices.size()),
                                "--no-python", cli, "--report", "train", "--config", path};
  std::string visible;
  for (const auto& d : devices) visible += (visible.empty() ? "" : ",") + d;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw IoError("cannot start torchrun: no pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0 || kv.rfind("WORLD_SIZE=", 0) == 0 || kv.rfind("RANK=", 0) == 0)
      continue;
    env.push_back(kv);
  }
  if (!cpu) env.push_back("CUDA_VISIBLE_DEVICES=" + visible);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, torchrun.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::unlink(path);
    throw InputError("cannot start " + torchrun + " (PyTorch's launcher, for distributed.devices \"" +
                     config.distributed.devices + "\"): " + std::strerror(rc) +
                     "; install torch in the Python environment on PATH, or set STUDIO_TORCHRUN");
  }
  m.child = pid;
  m.childStopped = false;
  m.channel = std::make_unique<SessionChannel>(StartOptions{}.metricQueueCapacity);
  m.done = false;
  SessionChannel* ch = m.channel.get();
  ch->device = cpu ? std::to_string(devices.size()) + " CPU processes" : "GPUs " + visible + " (one process each)";
  log::info("started torchrun: " + std::to_string(devices.size()) + " processes on " + ch->device);
  m.thread = std::thread([this, ch, fd = out[0], pid, settings = std::string(path)] {
    Impl& m = *m_impl;
    FILE* in = ::fdopen(fd, "r");
    std::string runDir, status, tail, error;
    char* line = nullptr;
    size_t cap = 0;
    ssize_t n;
    ch->state = SessionState::Starting;
    while ((n = ::getline(&line, &cap, in)) > 0) {
      std::string l(line, static_cast<size_t>(n));
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
      const auto tab = l.find('\t');
      const std::string key = tab == std::string::npos ? "" : l.substr(0, tab), value = l.substr(tab + 1);
      if (key == "studio-run") {
        std::lock_guard<std::mutex> lock(ch->textMutex);
        ch->runDir = runDir = value;
      } else if (key == "studio-total") {
        ch->totalSteps = std::atoll(value.c_str());
        if (ch->totalSteps > 0 && ch->state == SessionState::Starting) ch->state = SessionState::Running;
      } else if (key == "studio-phase") {
        std::lock_guard<std::mutex> lock(ch->textMutex);
        ch->phase = value.substr(0, value.find('\t'));
      } else if (key == "studio-record") {
        MetricRecord r;
        if (parseMetricsCsvRow(value, r)) {
          ch->post(r);
          ch->step = std::max<int64_t>(ch->step, r.step);
          ch->epoch = r.epoch;
          ch->wallSeconds = r.wallSeconds;
          if (r.kind == RecordKind::Train) {
            ch->lastLoss = r.trainLoss;
            if (std::isfinite(r.samplesPerSecond)) ch->samplesPerSecond = r.samplesPerSecond;
          }
        }
      } else if (key == "studio-end") {
        status = value;
      } else if (!l.empty()) {
        log::info("[torchrun] " + l);
        tail = l;
        if (error.empty() && l.rfind("error: ", 0) == 0) error = l.substr(7);  // the CLI's own message
      }
    }
    std::free(line);
    std::fclose(in);
    int wstatus = 0;
    ::waitpid(pid, &wstatus, 0);
    ::unlink(settings.c_str());
    RunSummary s = runDir.empty() ? RunSummary{} : summaryFile(runDir);
    if (s.status.empty()) {
      s.status = m.childStopped ? "stopped" : "failed";
      if (s.status == "failed")
        s.error = "the processes ended (" +
                  (WIFEXITED(wstatus) ? "exit status " + std::to_string(WEXITSTATUS(wstatus))
                                      : std::string("killed by a signal")) +
                  ") without a summary: " + (error.empty() ? tail : error);
    }
    m.publish(ch, s);
  });
}

namespace {
// Commands a run in several processes cannot take (only stop reaches them).
bool inProcesses(const pid_t child, const char* what) {
  if (child <= 0) return false;
  log::warn(std::string(what) + " applies to a run in the window's own process; a run in several processes can "
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

bool Session::pollMetric(MetricRecord& out) {
  return m_impl->channel && m_impl->channel->metrics.try_dequeue(out);
}

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
