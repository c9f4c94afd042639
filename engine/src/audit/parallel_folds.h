#pragma once
// The audit's folds at once (--parallel N): each fold a training process of
// the CLI (`training-studio-cli --report train --config FOLD` or `--report
// resume RUN`), N at a time, as the search runs its trials. On the CPU each
// has its share of the cores (performance.threads, unless set); with several
// GPUs each has one (CUDA_VISIBLE_DEVICES); on one GPU they share it. A
// child stops with a checkpoint when this process dies (STUDIO_STOP_WITH_PARENT),
// and when stopRequested says so it is sent SIGINT (it saves a checkpoint).
// Torch-free. Thread: the audit's (one thread; it waits for the children).

#include <functional>
#include <string>
#include <vector>

namespace studio {

struct FoldProcess {
  int fold = 0;
  std::string configFile;  // a fold to start: its settings file
  std::string resumeDir;   // or a fold to resume: its run folder
};

struct FoldProcessOptions {
  std::string cli;  // training-studio-cli
  int parallel = 2;
  int threadsEach = 0;    // performance.threads for each (0: leave the settings')
  std::vector<int> gpus;  // each child one of these (empty: leave CUDA_VISIBLE_DEVICES)
  std::function<bool()> stopRequested;
  // Called on this thread when a fold's process names its run folder.
  std::function<void(int fold, const std::string& runDir)> onRunDir;
};

// Runs the folds, parallel at a time, to their ends. Returns each fold's
// last lines that were not progress reports (its warnings and errors), in
// the order given. Throws InputError when the CLI cannot be started.
std::vector<std::string> runFoldProcesses(const std::vector<FoldProcess>& folds, const FoldProcessOptions& options);

}  // namespace studio
