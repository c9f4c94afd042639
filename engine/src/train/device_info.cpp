#include "train/device_info.h"

#include "studio/devices.h"
#include "studio/machine_memory.h"

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/mm.h>
#include <torch/cuda.h>

#include "cuda/cuda_side.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace studio {

namespace {
// The GPU index of a performance.device of "cuda" or "cuda:N".
int cudaIndex(const std::string& setting) { return setting == "cuda" ? 0 : std::stoi(setting.substr(5)); }
}  // namespace

torch::Device resolveDevice(const std::string& setting) {
  const bool haveCuda = torch::cuda::is_available();
  if (setting == "auto") return haveCuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (setting == "cpu") return torch::Device(torch::kCPU);
  const int index = cudaIndex(setting);
  if (!haveCuda)
    throw std::invalid_argument("performance.device is \"" + setting +
                                "\" but no CUDA GPU is available here; use \"auto\" or \"cpu\" (" + cudaSideStatus() +
                                ")");
  if (index >= static_cast<int>(torch::cuda::device_count()))
    throw std::invalid_argument("performance.device is \"" + setting + "\" but only " +
                                std::to_string(torch::cuda::device_count()) + " CUDA device(s) exist");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void applyPerformanceSwitches(const PerformanceConfig& c, const torch::Device& device) {
  auto& ctx = at::globalContext();
  if (device.is_cuda()) {
    ctx.setBenchmarkCuDNN(c.cudnn_benchmark);
    ctx.setAllowTF32CuBLAS(c.tf32);
    ctx.setAllowTF32CuDNN(c.tf32);
  }
  // More threads than cores only hurts (1024 on 2 cores: 29 s to start
  // them, steps 20 times slower); warningsOnThisMachine says so.
  const int cores = machineCores();
  at::set_num_threads(c.threads > 0 ? std::min(c.threads, cores) : defaultCpuThreads());
}

CudnnHeuristicsOnly::CudnnHeuristicsOnly(bool active) {
  auto& ctx = at::globalContext();
  if (active && ctx.benchmarkCuDNN()) {
    ctx.setBenchmarkCuDNN(false);
    m_restore = true;
  }
}

CudnnHeuristicsOnly::~CudnnHeuristicsOnly() {
  if (m_restore) at::globalContext().setBenchmarkCuDNN(true);
}

DeviceWarmup::DeviceWarmup(const torch::Device& device) {
  if (!device.is_cuda()) return;
  m_thread = std::thread([device] {
    try {
      torch::NoGradGuard noGrad;
      const auto opts = torch::TensorOptions().device(device);
      // A convolution loads cuDNN, a matrix product cuBLAS; tiny and
      // heuristic (no autotuning of shapes the run never uses).
      CudnnHeuristicsOnly heuristics;
      torch::Tensor x = torch::ones({2, 1, 8, 8}, opts);
      torch::Tensor y = torch::conv2d(x, torch::ones({2, 1, 3, 3}, opts));
      torch::Tensor z = torch::mm(torch::ones({8, 8}, opts), torch::ones({8, 8}, opts));
      (void)(y.sum() + z.sum()).item<float>();
    } catch (const std::exception&) {
      // The engine's first use of the device reports it.
    }
  });
}

DeviceWarmup::~DeviceWarmup() { wait(); }

void DeviceWarmup::wait() {
  if (m_thread.joinable()) m_thread.join();
}

std::string describeDevice(const torch::Device& device) {
  if (device.is_cuda()) return "cuda:" + std::to_string(device.index());
  return "cpu (" + std::to_string(at::get_num_threads()) + " threads)";
}

MemoryFigures memoryFigures(const torch::Device& device) {
  constexpr double kMiB = 1024.0 * 1024.0;
  MemoryFigures m;
  if (device.is_cuda()) {
    const auto stats = at::accelerator::getDeviceStats(device.index());
    m.allocatedMiB = static_cast<double>(stats.allocated_bytes[0].current) / kMiB;
    m.reservedMiB = static_cast<double>(stats.reserved_bytes[0].current) / kMiB;
    m.peakMiB = static_cast<double>(stats.allocated_bytes[0].peak) / kMiB;
    return m;
  }
  std::ifstream statm("/proc/self/statm");
  long pagesTotal = 0, pagesResident = 0;
  statm >> pagesTotal >> pagesResident;
  m.allocatedMiB = static_cast<double>(pagesResident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / kMiB;
  m.reservedMiB = static_cast<double>(pagesTotal) * static_cast<double>(sysconf(_SC_PAGESIZE)) / kMiB;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  m.peakMiB = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return m;
}

}  // namespace studio

namespace studio {

int64_t freeMemoryBytes(const torch::Device& device) {
  if (device.is_cuda()) {
    const auto [free, total] = at::accelerator::getMemoryInfo(device.index());
    return static_cast<int64_t>(free);
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : int64_t(1) << 32;
}

namespace {
std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}
}  // namespace

const std::vector<ComputeDevice>& computeDevices() {
  static const std::vector<ComputeDevice> list = [] {
    const double ram = physicalMemoryBytes();
    std::vector<ComputeDevice> out{
        {"cpu", std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " cores, " + gib(ram) + " memory"}};
    if (torch::cuda::is_available())
      for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i) {
        const torch::Device d(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
        // The properties only: no context is made on the GPU for the list.
        double total = 0;
        if (CudaSide* side = cudaSide())
          out.push_back({d.str(), side->deviceName(i, &total) + ", " + gib(total)});
        else
          out.push_back({d.str(), "a CUDA GPU"});
      }
    return out;
  }();
  return list;
}

std::vector<ConfigError> checkOnThisMachine(const TrainConfig& c) {
  std::vector<ConfigError> e;
  const auto& here = computeDevices();
  std::string names;
  for (const auto& d : here) names += (names.empty() ? "" : ", ") + d.name;
  const auto gpus = static_cast<int>(here.size()) - 1;
  const std::string& device = c.performance.device;
  if (device.rfind("cuda", 0) == 0) {
    if (cudaIndex(device) >= gpus)
      e.push_back({"performance.device", "names " + device + ", which is not on this machine (it has " + names +
                                             "); use auto or one of those"});
  }
  for (const auto& d : processDevices(c.distributed.devices))
    if (d != "cpu" && std::atoi(d.c_str()) >= gpus) {
      e.push_back({"distributed.devices", "names GPU " + d + ", which is not on this machine (it has " + names +
                                              "); list GPUs that are here, or cpu per process"});
      break;
    }
  return e;
}

int machineCores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int defaultCpuThreads() {
  const int cores = machineCores();
  if (const char* v = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return static_cast<int>(std::min<long>(n, cores));
  }
  return cores;
}

std::vector<ConfigError> warningsOnThisMachine(const TrainConfig& c) {
  std::vector<ConfigError> w;
  const bool gpuHere = computeDevices().size() > 1;
  const std::string& device = c.performance.device;
  const bool onCpu = device == "cpu" || (device == "auto" && !gpuHere);
  if (c.precision.mode == PrecisionMode::fp16 && onCpu)
    w.push_back({"precision.mode", std::string("fp16 on the CPU") +
                                       (device == "auto" ? " (this machine has no GPU)" : "") +
                                       " is slow and meant for testing; bf16 is the CPU's fast type"});
  const int cores = machineCores();
  if (c.performance.threads > cores)
    w.push_back({"performance.threads", std::to_string(c.performance.threads) + " is more than this machine's " +
                                            std::to_string(cores) +
                                            " cores: threads beyond the cores only wait on "
                                            "each other, so the run uses " +
                                            std::to_string(cores)});
  return w;
}

}  // namespace studio
