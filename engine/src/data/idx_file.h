#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (gzip or raw).
// Thread: free functions, any thread.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "studio/dataset_info.h"  // DataError

namespace studio {

struct IdxArray {
  std::vector<int64_t> dims;   // e.g. {60000, 28, 28} or {60000}
  std::vector<uint8_t> data;   // unsigned bytes, row-major
};

// Reads an unsigned-byte IDX file with `expectedRank` dimensions. Throws
// DataError naming the file when it is missing, not IDX, of another rank,
// truncated or longer than its header says.
IdxArray readIdxFile(const std::string& path, int expectedRank);

}  // namespace studio
