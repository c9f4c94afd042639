#include "ui/charts/system_monitor.h"

#include <dlfcn.h>
#include <unistd.h>

#include <QFile>
#include <QThread>

#include <algorithm>
#include <memory>

#if __has_include(<nvml.h>)
#include <nvml.h>
#else
// The few NVML calls used, as NVIDIA's NVML API reference declares them
// (docs.nvidia.com/deploy/nvml-api; nvml.h ships with the CUDA toolkit's
// nvml-dev package, absent from some installs). Their ABI is stable: these
// are the _v2 entry points of every driver since 2013.
extern "C" {
typedef int nvmlReturn_t;  // 0: NVML_SUCCESS
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;
typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;
}
#endif

namespace studio::ui {

struct SystemMonitor::Nvml {
  void* library = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*utilisation)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
};

namespace {

template <class F>
bool bind(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  return f != nullptr;
}

// utime + stime of this process, in seconds (fields 14 and 15 of
// /proc/self/stat, after the parenthesised command name).
double processCpuSeconds() {
  QFile f("/proc/self/stat");
  if (!f.open(QIODevice::ReadOnly)) return -1;
  const QByteArray stat = f.readAll();
  const qsizetype close = stat.lastIndexOf(')');
  if (close < 0) return -1;
  const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
  // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  if (fields.size() < 13) return -1;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (fields[11].toDouble() + fields[12].toDouble()) / ticks;
}

}  // namespace

SystemMonitor::SystemMonitor() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    m_noGpu = QStringLiteral("no GPU figures: NVIDIA's driver library (libnvidia-ml.so.1) is not installed");
    return;
  }
  auto nvml = std::make_unique<Nvml>();
  nvml->library = library;
  if (!bind(library, "nvmlInit_v2", nvml->init) || !bind(library, "nvmlShutdown", nvml->shutdown) ||
      !bind(library, "nvmlDeviceGetHandleByIndex_v2", nvml->handle) ||
      !bind(library, "nvmlDeviceGetUtilizationRates", nvml->utilisation) ||
      !bind(library, "nvmlDeviceGetMemoryInfo", nvml->memory)) {
    m_noGpu = QStringLiteral("no GPU figures: libnvidia-ml.so.1 lacks the NVML calls used (driver too old)");
    dlclose(library);
    return;
  }
  if (const nvmlReturn_t r = nvml->init(); r != 0) {
    m_noGpu =
        QStringLiteral("no GPU figures: NVML did not start (error %1: no GPU, or the driver is not loaded)").arg(r);
    dlclose(library);
    return;
  }
  m_nvml = nvml.release();
}

SystemMonitor::~SystemMonitor() {
  if (!m_nvml) return;
  m_nvml->shutdown();
  dlclose(m_nvml->library);
  delete m_nvml;
}

SystemMonitor::Sample SystemMonitor::sample(int gpu) {
  Sample s;
  const double cpu = processCpuSeconds();
  const auto now = std::chrono::steady_clock::now();
  if (cpu >= 0 && m_lastCpuSeconds >= 0) {
    const double wall = std::chrono::duration<double>(now - m_lastWall).count();
    const int cores = std::max(1, QThread::idealThreadCount());
    if (wall > 0) s.cpuPercent = 100.0 * (cpu - m_lastCpuSeconds) / wall / cores;
  }
  m_lastCpuSeconds = cpu;
  m_lastWall = now;
  if (m_nvml && gpu >= 0) {
    nvmlDevice_t device = nullptr;
    if (m_nvml->handle(static_cast<unsigned int>(gpu), &device) == 0) {
      nvmlUtilization_t u{};
      if (m_nvml->utilisation(device, &u) == 0) s.gpuPercent = u.gpu;
      nvmlMemory_t m{};
      if (m_nvml->memory(device, &m) == 0 && m.total > 0) {
        s.gpuMemoryPercent = 100.0 * static_cast<double>(m.used) / static_cast<double>(m.total);
        s.gpuMemoryUsedMiB = static_cast<double>(m.used) / (1024.0 * 1024.0);
      }
    }
  }
  return s;
}

}  // namespace studio::ui
