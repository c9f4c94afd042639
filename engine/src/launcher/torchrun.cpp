#include "launcher/torchrun.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "studio/errors.h"
#include "studio/log.h"
#include "studio/report_lines.h"
#include "studio/run_layout.h"

namespace studio {

TorchrunProcess startTorchrun(const TrainConfig& config, const std::vector<std::string>& devices,
                              const std::string& torchrun, const std::string& cli) {
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
  std::vector<std::string> args{torchrun,           "--standalone",
                                "--nproc-per-node", std::to_string(devices.size()),
                                "--no-python",      cli,
                                "--report",         "train",
                                "--config",         path};
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
  TorchrunProcess p;
  p.pid = pid;
  p.output = out[0];
  p.settingsFile = path;
  p.device = cpu ? std::to_string(devices.size()) + " CPU processes" : "GPUs " + visible + " (one process each)";
  return p;
}

namespace {
// Rank 0's report into the channel.
void apply(const ReportLine& r, SessionChannel& ch, std::string& runDir, std::string& status) {
  switch (r.key) {
    case ReportKey::Run: {
      std::lock_guard<std::mutex> lock(ch.textMutex);
      ch.runDir = runDir = r.value;
      break;
    }
    case ReportKey::Total:
      ch.totalSteps = std::atoll(r.value.c_str());
      if (ch.totalSteps > 0 && ch.state == SessionState::Starting) ch.state = SessionState::Running;
      break;
    case ReportKey::Phase: {
      std::lock_guard<std::mutex> lock(ch.textMutex);
      ch.phase = r.value.substr(0, r.value.find('\t'));
      break;
    }
    case ReportKey::Record: {
      MetricRecord m;
      if (parseMetricsCsvRow(r.value, m)) {
        ch.post(m);
        ch.step = std::max<int64_t>(ch.step, m.step);
        ch.epoch = m.epoch;
        ch.wallSeconds = m.wallSeconds;
        if (m.kind == RecordKind::Train) {
          ch.lastLoss = m.trainLoss;
          if (std::isfinite(m.samplesPerSecond)) ch.samplesPerSecond = m.samplesPerSecond;
        }
      }
      break;
    }
    case ReportKey::End:
      status = r.value;
      break;
  }
}
}  // namespace

RunSummary followTorchrun(const TorchrunProcess& process, SessionChannel& ch, const std::atomic<bool>& stopped) {
  FILE* in = ::fdopen(process.output, "r");
  std::string runDir, status, tail, error;
  char* line = nullptr;
  size_t cap = 0;
  ssize_t n;
  ch.state = SessionState::Starting;
  while ((n = ::getline(&line, &cap, in)) > 0) {
    std::string l(line, static_cast<size_t>(n));
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    if (const auto report = parseReportLine(l)) {
      apply(*report, ch, runDir, status);
    } else if (!l.empty()) {
      log::info("[torchrun] " + l);
      tail = l;
      if (error.empty() && l.rfind("error: ", 0) == 0) error = l.substr(7);  // the CLI's own message
    }
  }
  std::free(line);
  std::fclose(in);
  int wstatus = 0;
  ::waitpid(process.pid, &wstatus, 0);
  ::unlink(process.settingsFile.c_str());
  RunSummary s = readSummaryFile(runDir).summary;
  if (!s.status) {
    s.status = stopped ? RunStatus::stopped : RunStatus::failed;
    if (s.status == RunStatus::failed)
      s.error = "the processes ended (" +
                (WIFEXITED(wstatus) ? "exit status " + std::to_string(WEXITSTATUS(wstatus))
                                    : std::string("killed by a signal")) +
                ") without a summary: " + (error.empty() ? tail : error);
  }
  return s;
}

}  // namespace studio
