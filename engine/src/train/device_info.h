#pragma once
// Which device a run uses, global performance switches, and memory figures.
// Thread: engine thread.

#include <string>

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

struct MemoryFigures {
  double allocatedMiB = 0, reservedMiB = 0, peakMiB = 0;
};
// CUDA caching-allocator figures on a GPU; the process's RSS (and peak RSS)
// on the CPU.
MemoryFigures memoryFigures(const torch::Device& device);
// Free device memory (CUDA), or available system memory (the CPU), in bytes.
int64_t freeMemoryBytes(const torch::Device& device);

}  // namespace studio
