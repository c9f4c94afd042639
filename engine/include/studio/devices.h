#pragma once
// The devices this machine can train on, for the front-ends' inline checks
// (torch-free; the engine asks LibTorch once).
// Thread: any (the list is made once).

#include <string>
#include <vector>

#include "studio/train_config.h"

namespace studio {

struct ComputeDevice {
  std::string name;         // "cpu", "cuda:0"
  std::string description;  // "NVIDIA H100 80GB HBM3, 79.1 GiB"; "16 cores, 125.6 GiB memory"
};
const std::vector<ComputeDevice>& computeDevices();
// Whether LibTorch's CUDA half is loaded, and why not, in one line
// ("CUDA: not loaded: no NVIDIA driver here ..."): engine/src/cuda/cuda_side.h.
std::string cudaSideStatus();
// The machine's cores (std::thread::hardware_concurrency, at least 1).
int machineCores();
// The CPU threads of performance.threads 0: OMP_NUM_THREADS's number where
// it is set (as PyTorch takes it), at most the cores; else every core.
int defaultCpuThreads();

// Settings that validate but would fail on this machine: performance.device
// or distributed.devices naming a GPU that is not here. Empty when none.
std::vector<ConfigError> checkOnThisMachine(const TrainConfig& config);

// Settings that run on this machine but are probably not meant: fp16 where
// the run would train on the CPU (slow there; bf16 is the CPU's fast type),
// performance.threads above the machine's cores (the run uses the cores).
// The form shows them as notes, a run's log as warnings; they never block a run.
std::vector<ConfigError> warningsOnThisMachine(const TrainConfig& config);

}  // namespace studio
