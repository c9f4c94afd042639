#pragma once
// The machine's side of a run, sampled by the window (the engine runs in its
// process): this process's CPU share, from /proc/self/stat over the time since
// the last sample, as a percentage of all the machine's cores; and, where
// NVIDIA's driver is installed, a GPU's utilisation and memory through NVML
// (libnvidia-ml.so.1, the driver's own library, opened at run time, so the
// studio runs the same where there is none and says why there are no GPU
// figures). Widget-free.
// Thread: one thread (the UI thread).

#include <QString>

#include <chrono>
#include <limits>

namespace studio::ui {

class SystemMonitor {
 public:
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  struct Sample {
    double cpuPercent = kNone;  // of all cores; NaN at the first sample
    double gpuPercent = kNone;  // NVML's utilisation over its last period
    double gpuMemoryPercent = kNone;
    double gpuMemoryUsedMiB = kNone;
  };

  SystemMonitor();
  ~SystemMonitor();
  SystemMonitor(const SystemMonitor&) = delete;
  SystemMonitor& operator=(const SystemMonitor&) = delete;

  // gpu: the CUDA device index to read, or -1 for none (a CPU run).
  Sample sample(int gpu);
  // Whether NVML answered, and if not, why ("no NVIDIA driver: ...").
  bool gpuFigures() const { return m_nvml != nullptr; }
  QString noGpuReason() const { return m_noGpu; }

 private:
  struct Nvml;
  Nvml* m_nvml = nullptr;
  QString m_noGpu;
  double m_lastCpuSeconds = -1;
  std::chrono::steady_clock::time_point m_lastWall{};
};

}  // namespace studio::ui
