#pragma once
// Which device a run uses, global performance switches, and memory figures.
// Thread: engine thread.

#include <string>
#include <thread>

#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

// "auto" picks the first CUDA device when one is present, else the CPU.
// Throws std::invalid_argument naming performance.device when a CUDA device
// is asked for and absent.
torch::Device resolveDevice(const std::string& setting);
// cuDNN benchmark, TF32, CPU threads.
void applyPerformanceSwitches(const PerformanceConfig& config, const torch::Device& device);
std::string describeDevice(const torch::Device& device);

// cuDNN's autotuning (performance.cudnn_benchmark) paused for the guard's
// life. Each new input shape costs a benchmark of every algorithm (on an
// H100, tenths of a second per shape for the default preset), which pays only
// for the shape the training step repeats: evaluations and an epoch's short
// last batch use cuDNN's heuristics instead.
class CudnnHeuristicsOnly {
 public:
  explicit CudnnHeuristicsOnly(bool active = true);
  ~CudnnHeuristicsOnly();
  CudnnHeuristicsOnly(const CudnnHeuristicsOnly&) = delete;
  CudnnHeuristicsOnly& operator=(const CudnnHeuristicsOnly&) = delete;

 private:
  bool m_restore = false;
};

// Starts the GPU's slow first steps on a thread of its own: the CUDA
// context, and the cuBLAS and cuDNN libraries' loading and first handles,
// so that they overlap reading the data. Does nothing for the CPU. The
// destructor (or wait()) joins; errors are left for the engine's own first
// use of the device to report.
class DeviceWarmup {
 public:
  explicit DeviceWarmup(const torch::Device& device);
  ~DeviceWarmup();
  void wait();
  DeviceWarmup(const DeviceWarmup&) = delete;
  DeviceWarmup& operator=(const DeviceWarmup&) = delete;

 private:
  std::thread m_thread;
};

struct MemoryFigures {
  double allocatedMiB = 0, reservedMiB = 0, peakMiB = 0;
};
// CUDA caching-allocator figures on a GPU; the process's RSS (and peak RSS)
// on the CPU.
MemoryFigures memoryFigures(const torch::Device& device);
// Free device memory (CUDA), or available system memory (the CPU), in bytes.
int64_t freeMemoryBytes(const torch::Device& device);

}  // namespace studio
