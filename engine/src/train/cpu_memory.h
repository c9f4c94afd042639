#pragma once
// Tensor memory on the CPU, counted, with an optional limit (memory.cpu_limit_mib).
// While a CpuMemoryMeter lives, c10's CPU allocator is wrapped: every tensor
// allocated on the CPU is counted (bytes live, peak since reset), and past
// the limit an allocation throws c10::OutOfMemoryError, as the CUDA caching
// allocator does when a GPU is full, so the out-of-memory paths (the
// micro-batch back-off, batch-find) work and are tested on the CPU. Memory
// allocated before the meter existed is not counted. The blocks are c10's
// own, so a block allocated under one allocator may be freed under the
// other (oneDNN frees through whichever is current). One meter at a time.
// Thread: any (the counters are atomic); made and destroyed on one thread.

#include <cstdint>

namespace c10 {
struct Allocator;
}

namespace studio {

class CpuMemoryMeter {
 public:
  // limitBytes 0: count only.
  explicit CpuMemoryMeter(int64_t limitBytes = 0);
  ~CpuMemoryMeter();  // the previous allocator again (live tensors stay valid)
  CpuMemoryMeter(const CpuMemoryMeter&) = delete;
  CpuMemoryMeter& operator=(const CpuMemoryMeter&) = delete;

  int64_t liveBytes() const;
  int64_t peakBytes() const;
  void resetPeak();  // the peak from now on starts at what is live
  int64_t limitBytes() const;
  void setLimit(int64_t bytes);

 private:
  c10::Allocator* m_previous = nullptr;
};

}  // namespace studio
