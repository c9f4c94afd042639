#pragma once
// This machine's physical memory, in bytes (0 when it cannot be read): what
// the checks that refuse work too large for it (classes x classes counts, a
// decoded image set held in memory) and the device list measure against.
// Torch-free.
// Thread: any.

#include <unistd.h>

namespace studio {

inline double physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0;
}

}  // namespace studio
