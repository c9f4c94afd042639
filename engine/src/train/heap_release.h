#pragma once
// Gives the C heap's free pages back to the system (tcmalloc's free spans,
// or glibc's malloc_trim; nothing in sanitizer builds): after a run's
// evaluations (callbacks/heap_trim.cpp) and once a probe's run is freed
// (session.cpp), so that the process that ran them does not keep their peak.
// Thread: any.

namespace studio {

void releaseFreeHeap();

}  // namespace studio
