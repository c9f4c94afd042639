#include "train/cpu_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace studio {
namespace {

std::atomic<int64_t> g_live{0}, g_peak{0}, g_limit{0};
std::atomic<bool> g_active{false};

std::string mib(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

// Each allocation carries its size in a header before the data, so the data
// pointer is its own context (raw_allocate, which some kernels use for
// scratch space, requires that) and the free knows what to uncount.
constexpr size_t kHeader = 64;  // keeps the data 64-byte aligned, as c10's allocator does

void releaseCounted(void* data) {
  if (!data) return;
  char* raw = static_cast<char*>(data) - kHeader;
  int64_t bytes = 0;
  std::memcpy(&bytes, raw, sizeof bytes);
  g_live.fetch_sub(bytes, std::memory_order_relaxed);
  c10::free_cpu(raw);
}

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const auto bytes = static_cast<int64_t>(n);
    const int64_t limit = g_limit.load(std::memory_order_relaxed);
    const int64_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (limit > 0 && now > limit) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", mib(bytes), " with ",
                       mib(now - bytes), " in use of the ", mib(limit), " memory.cpu_limit_mib allows");
    }
    int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    char* raw = nullptr;
    try {
      raw = static_cast<char*>(c10::alloc_cpu(n + kHeader));
    } catch (...) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    std::memcpy(raw, &bytes, sizeof bytes);
    void* data = raw + kHeader;
    return {data, data, &releaseCounted, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &releaseCounted; }

  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

CountingAllocator g_allocator;
// Above c10's own CPU allocator (priority 0) and below nothing else we know.
constexpr uint8_t kPriority = 10;

}  // namespace

CpuMemoryMeter::CpuMemoryMeter(int64_t limitBytes) {
  if (g_active.exchange(true)) throw std::logic_error("a CpuMemoryMeter is already active");
  m_previous = c10::GetCPUAllocator();
  g_live = 0;
  g_peak = 0;
  g_limit = limitBytes;
  c10::SetCPUAllocator(&g_allocator, kPriority);
}

CpuMemoryMeter::~CpuMemoryMeter() {
  g_limit = 0;
  c10::SetCPUAllocator(m_previous, kPriority);
  g_active = false;
}

int64_t CpuMemoryMeter::liveBytes() const { return g_live.load(); }
int64_t CpuMemoryMeter::peakBytes() const { return g_peak.load(); }
void CpuMemoryMeter::resetPeak() { g_peak = g_live.load(); }
int64_t CpuMemoryMeter::limitBytes() const { return g_limit.load(); }
void CpuMemoryMeter::setLimit(int64_t bytes) { g_limit = bytes; }

}  // namespace studio
