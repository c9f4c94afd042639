// Activation checkpointing (memory.activation_checkpointing): memory and time
// of one training step (forward, backward) of a deep residual network with
// and without it. Memory is counted exactly: on the CPU by CpuMemoryMeter
// (every tensor allocation), on a GPU by the CUDA caching allocator's
// statistics. Figures, per setting:
//   kept     the tensor memory live after the forward pass, above what was
//            live before it (the activations saved for the backward pass);
//   peak     the highest tensor memory during the step above that start,
//            less the parameters' gradients (the same with or without);
//   step ms  median time of a forward and backward pass.
// Goal (issue 8): peak <= 0.6x the figure without checkpointing at <= 1.35x
// the step time.
//
//   bench_memory [--device cpu|cuda] [--batch N] [--reps N]
#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/builtin_model.h"
#include "train/cpu_memory.h"

using namespace studio;

namespace {

struct Figures {
  double keptMiB = 0, peakMiB = 0, stepMs = 0;
};

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

Figures measure(const ModelConfig& config, const std::string& mode, const torch::Device& device, int64_t batch,
                int reps) {
  torch::manual_seed(1);
  InputShape shape;
  shape.channels = 1;
  shape.height = 28;
  shape.width = 28;
  BuiltinModel model(config, shape, 10);
  if (mode != "off") model.checkpointActivations(mode == "auto" ? 0 : std::stoll(mode));
  model.to(device);
  model.setTraining(true);
  int64_t gradBytes = 0;
  for (auto& p : model.parameters()) gradBytes += p.numel() * p.element_size();
  const auto opts = torch::TensorOptions().device(device);
  const torch::Tensor x = torch::randn({batch, 1, 28, 28}, opts);
  const torch::Tensor y = torch::randint(0, 10, {batch}, opts.dtype(torch::kLong));
  auto zeroGrads = [&] {
    for (auto& p : model.parameters()) p.mutable_grad() = torch::Tensor();
  };
  auto sync = [&] {
    if (device.is_cuda()) at::accelerator::synchronizeDevice(device.index());
  };
  Figures f;
  // Memory, on one step after a warm-up step.
  torch::nn::functional::cross_entropy(model.forward(x), y).backward();
  zeroGrads();
  sync();
  if (device.is_cuda()) {
    const auto before = at::accelerator::getDeviceStats(device.index()).allocated_bytes[0].current;
    at::accelerator::resetPeakStats(device.index());
    torch::Tensor loss = torch::nn::functional::cross_entropy(model.forward(x), y);
    sync();
    const auto afterForward = at::accelerator::getDeviceStats(device.index()).allocated_bytes[0].current;
    loss.backward();
    sync();
    const auto peak = at::accelerator::getDeviceStats(device.index()).allocated_bytes[0].peak;
    f.keptMiB = mib(afterForward - before);
    f.peakMiB = mib(peak - before - gradBytes);
  } else {
    CpuMemoryMeter meter;
    torch::Tensor loss = torch::nn::functional::cross_entropy(model.forward(x), y);
    f.keptMiB = mib(meter.liveBytes());
    loss.backward();
    f.peakMiB = mib(meter.peakBytes() - gradBytes);
  }
  zeroGrads();
  // Time.
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    torch::nn::functional::cross_entropy(model.forward(x), y).backward();
    sync();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    zeroGrads();
  }
  std::sort(ms.begin(), ms.end());
  f.stepMs = ms[ms.size() / 2];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string deviceName = torch::cuda::is_available() ? "cuda" : "cpu";
  int64_t batch = 0;
  int reps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device"))
      deviceName = argv[i + 1];
    else if (!std::strcmp(argv[i], "--batch"))
      batch = std::stoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::stoi(argv[i + 1]);
  }
  const torch::Device device(deviceName == "cuda" ? torch::kCUDA : torch::kCPU, deviceName == "cuda" ? 0 : -1);
  if (batch == 0) batch = device.is_cuda() ? 256 : 64;
  if (reps == 0) reps = device.is_cuda() ? 50 : 7;
  std::printf("activation checkpointing: one training step of a residual network on %s, batch %lld, median of %d\n",
              device.is_cuda() ? "cuda" : ("cpu, " + std::to_string(at::get_num_threads()) + " threads").c_str(),
              static_cast<long long>(batch), reps);
  std::printf("%-16s %-8s %10s %10s %9s %11s %11s\n", "model", "segments", "kept MiB", "peak MiB", "step ms",
              "peak ratio", "time ratio");
  for (const auto& [width, depth] : std::vector<std::pair<int, int>>{{16, 8}, {32, 8}, {16, 10}}) {
    ModelConfig config;
    config.kind = "resnet";
    config.width = width;
    config.depth = depth;
    const Figures off = measure(config, "off", device, batch, reps);
    for (const char* mode : {"off", "auto", "1", "2"}) {
      const Figures f = std::string(mode) == "off" ? off : measure(config, mode, device, batch, reps);
      const std::string name = "resnet w" + std::to_string(width) + " d" + std::to_string(depth);
      std::printf("%-16s %-8s %10.1f %10.1f %9.1f %11.2f %11.2f\n", name.c_str(),
                  std::string(mode) == "off"    ? "off"
                  : std::string(mode) == "auto" ? "auto"
                                                : ("every " + std::string(mode)).c_str(),
                  f.keptMiB, f.peakMiB, f.stepMs, f.peakMiB / off.peakMiB, f.stepMs / off.stepMs);
    }
  }
  return 0;
}
