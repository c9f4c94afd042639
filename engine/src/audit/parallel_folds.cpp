#include "audit/parallel_folds.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "studio/errors.h"

extern char** environ;

namespace studio {
namespace {

struct Child {
  size_t job = 0;
  pid_t pid = -1;
  int out = -1;  // its stdout and stderr
  std::string pending, lines;
  bool signalled = false;
};

Child spawnFold(const FoldProcess& f, size_t job, int slot, const FoldProcessOptions& o) {
  std::vector<std::string> args{o.cli, "--report"};
  if (!f.resumeDir.empty()) {
    args.insert(args.end(), {"resume", f.resumeDir});
  } else {
    args.insert(args.end(), {"train", "--config", f.configFile});
    if (o.threadsEach > 0) args.insert(args.end(), {"--set", "performance.threads=" + std::to_string(o.threadsEach)});
  }
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.rfind("STUDIO_STOP_WITH_PARENT=", 0) == 0 || (!o.gpus.empty() && v.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0))
      continue;
    env.push_back(v);
  }
  env.push_back("STUDIO_STOP_WITH_PARENT=" + std::to_string(::getpid()));
  if (!o.gpus.empty())
    env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(o.gpus[static_cast<size_t>(slot) % o.gpus.size()]));
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) throw IoError("audit: cannot start a fold: no pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe[1], 2);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  // Its own process group: a Ctrl-C in the terminal reaches this process,
  // which passes one stop on; a second one would quit the fold unsaved.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  Child c;
  c.job = job;
  const int rc = ::posix_spawn(&c.pid, o.cli.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe[1]);
  if (rc != 0) {
    ::close(pipe[0]);
    throw InputError("audit: cannot start " + o.cli + " for fold " + std::to_string(f.fold) + ": " + std::strerror(rc));
  }
  c.out = pipe[0];
  return c;
}

// A child's whole lines: its run folder to onRunDir, progress reports
// dropped, anything else kept (the last few) for the caller.
void takeLines(Child& c, const FoldProcess& f, const FoldProcessOptions& o) {
  for (size_t end; (end = c.pending.find('\n')) != std::string::npos;) {
    const std::string line = c.pending.substr(0, end);
    c.pending.erase(0, end + 1);
    if (line.rfind("studio-run\t", 0) == 0) {
      if (o.onRunDir) o.onRunDir(f.fold, line.substr(11));
    } else if (line.rfind("studio-", 0) != 0) {
      c.lines += line + "\n";
      if (c.lines.size() > 4000) c.lines.erase(0, c.lines.size() - 4000);
    }
  }
}

}  // namespace

std::vector<std::string> runFoldProcesses(const std::vector<FoldProcess>& folds, const FoldProcessOptions& o) {
  std::vector<std::string> out(folds.size());
  std::deque<size_t> waiting;
  for (size_t i = 0; i < folds.size(); ++i) waiting.push_back(i);
  std::vector<Child> running;
  int slot = 0;
  bool stopping = false;
  while (!waiting.empty() || !running.empty()) {
    if (!stopping && o.stopRequested && o.stopRequested()) stopping = true;
    if (stopping) {
      waiting.clear();
      for (auto& c : running)
        if (!c.signalled) {
          ::kill(c.pid, SIGINT);
          c.signalled = true;
        }
    }
    while (!waiting.empty() && static_cast<int>(running.size()) < std::max(1, o.parallel)) {
      running.push_back(spawnFold(folds[waiting.front()], waiting.front(), slot++, o));
      waiting.pop_front();
    }
    std::vector<pollfd> fds;
    for (const auto& c : running) fds.push_back({c.out, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) throw IoError("audit: poll failed");
    for (size_t i = 0; i < running.size();) {
      Child& c = running[i];
      bool ended = false;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[8192];
        const ssize_t n = ::read(c.out, buffer, sizeof buffer);
        if (n > 0) {
          c.pending.append(buffer, static_cast<size_t>(n));
          takeLines(c, folds[c.job], o);
        } else if (n == 0 || errno != EINTR) {
          ended = true;
        }
      }
      if (!ended) {
        ++i;
        continue;
      }
      c.pending += "\n";
      takeLines(c, folds[c.job], o);
      ::close(c.out);
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      out[c.job] = c.lines;
      if (WIFSIGNALED(status)) out[c.job] += "(its process ended by signal " + std::to_string(WTERMSIG(status)) + ")\n";
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return out;
}

}  // namespace studio
