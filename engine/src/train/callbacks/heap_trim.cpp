// Gives the C heap's free pages back to the system. The step's and the
// evaluations' large buffers are freed each time, and glibc keeps such
// pages, fragmented, for ever: a 30-minute soak (bench_soak) grew 12 % with
// the heap in use flat. Called after each evaluation and at a metrics flush
// at most every 30 s: it took 11-37 ms on the 2-core VM, so under 0.15 % of
// the time. With tcmalloc (STUDIO_TCMALLOC) its page heap's free spans go
// back instead; between these calls it keeps them, which is its speed.
// Not in sanitizer builds: their allocator replaces glibc's, whose arenas
// malloc_trim would walk from a thread that never used them (a crash under
// ASan from a thread, google/sanitizers#1721; under TSan its report may hang).
#include "train/callbacks/train_callback.h"
#include "train/heap_release.h"

#if defined(STUDIO_TCMALLOC)
#include <gperftools/malloc_extension_c.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

namespace studio {

void releaseFreeHeap() {
#if defined(STUDIO_TCMALLOC)
  MallocExtension_ReleaseFreeMemory();
#elif defined(__GLIBC__) && !defined(STUDIO_SANITIZED)
  malloc_trim(0);
#endif
}

namespace {

class HeapTrim : public TrainCallback {
 public:
  void onFlushed(CallbackView&) override {
    if (Clock::now() - m_last >= std::chrono::seconds(30)) trim();
  }
  void afterEvaluation(CallbackView&, const EvalVerdict&) override { trim(); }

 private:
  void trim() {
    releaseFreeHeap();
    m_last = Clock::now();
  }
  Clock::time_point m_last = Clock::now();
};

}  // namespace

std::unique_ptr<TrainCallback> makeHeapTrim(CallbackView&) { return std::make_unique<HeapTrim>(); }

}  // namespace studio
