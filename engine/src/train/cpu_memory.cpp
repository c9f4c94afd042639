#include "train/cpu_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace studio {
namespace {

std::atomic<int64_t> g_live{0}, g_peak{0}, g_limit{0};
std::atomic<bool> g_active{false};

std::string mib(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

[[noreturn]] void outOfMemory(int64_t bytes, int64_t limit) {
  TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", mib(bytes), " with ",
                   mib(g_live.load(std::memory_order_relaxed)), " in use of the ", mib(limit),
                   " memory.cpu_limit_mib allows");
  std::abort();  // not reached: TORCH_CHECK_WITH throws
}

// The blocks are c10's own (alloc_cpu, freed by free_cpu), counted by the
// heap's size of each (malloc_usable_size), so a block may be freed by
// either allocator: oneDNN allocates its scratch and cached memory through
// c10::GetAllocator(kCPU)->raw_allocate and frees it through whichever CPU
// allocator is current then (ATen's IDeepRegistration.cpp). The meter once
// put a size header before its blocks, and a block crossing the meter's
// start or end was freed at a pointer the heap never gave out: the window's
// model summary, convolving beside a run with memory.cpu_limit_mib or a
// batch-find, corrupted the heap. A block allocated before the meter and
// freed under it is uncounted without having been counted (the live count
// may read a little low); the count starts again at each meter.
int64_t blockBytes(void* data) { return static_cast<int64_t>(::malloc_usable_size(data)); }

void releaseCounted(void* data) {
  if (!data) return;
  g_live.fetch_sub(blockBytes(data), std::memory_order_relaxed);
  c10::free_cpu(data);
}

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const int64_t limit = g_limit.load(std::memory_order_relaxed);
    // Refused before the heap is asked: the size the heap will give is at least n.
    if (limit > 0 && g_live.load(std::memory_order_relaxed) + static_cast<int64_t>(n) > limit)
      outOfMemory(static_cast<int64_t>(n), limit);
    void* data = c10::alloc_cpu(n);
    const int64_t bytes = data ? blockBytes(data) : 0;
    const int64_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (limit > 0 && now > limit) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      c10::free_cpu(data);
      outOfMemory(static_cast<int64_t>(n), limit);
    }
    int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
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
