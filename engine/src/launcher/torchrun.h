// A run in several processes: PyTorch's launcher, torchrun, starts one
// training-studio-cli per device, and the window's process follows rank 0's
// --report lines (studio/report_lines.h). Session::startProcesses uses it.
#pragma once

#include <sys/types.h>
#include <atomic>
#include <string>
#include <vector>

#include "studio/session.h"
#include "studio/train_config.h"
#include "train/session_channel.h"

namespace studio {

struct TorchrunProcess {
  pid_t pid = -1;
  int output = -1;           // the read end of the processes' stdout and stderr
  std::string settingsFile;  // the settings the CLI reads; removed by followTorchrun
  std::string device;        // "2 CPU processes", "GPUs 0,1 (one process each)"
};

// Writes `config` (for `devices`, the list distributed.devices names) to a
// settings file of its own and starts `torchrun` with one `cli` process per
// device. Throws InputError or IoError that say what failed.
TorchrunProcess startTorchrun(const TrainConfig& config, const std::vector<std::string>& devices,
                              const std::string& torchrun, const std::string& cli);

// Reads the processes' output to its end: rank 0's reports into `ch`, every
// other line to the log. Then waits for torchrun, removes the settings file
// and returns the run's summary.json; without one, a failed run that says how
// the processes ended (or a stopped one when `stopped` was set).
RunSummary followTorchrun(const TorchrunProcess& process, SessionChannel& ch, const std::atomic<bool>& stopped);

}  // namespace studio
