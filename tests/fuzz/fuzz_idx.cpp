// IDX files (raw or gzip): headers, sizes, truncation, damaged gzip streams;
// the whole file and its first items.
#include "fuzz_input.h"
#include "studio/idx_file.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputFile file(data, size);
  for (int rank : {1, 3}) {
    try {
      const IdxArray a = readIdxFile(file.path(), rank);
      int64_t n = 1;
      for (int64_t d : a.dims) n *= d;
      if (static_cast<int64_t>(a.data.size()) != n) std::abort();  // what it returns is what it says
    } catch (const DataError&) {
    }
    try {  // the Data tab's read of the first items
      const IdxArray a = readIdxFirst(file.path(), rank, 3);
      int64_t n = 1;
      for (int64_t d : a.dims) n *= d;
      if (a.dims.empty() || a.dims[0] > 3 || static_cast<int64_t>(a.data.size()) != n) std::abort();
    } catch (const DataError&) {
    }
  }
  return 0;
}
