#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (gzip or raw). A .gz
// file's CRC-32 and length are checked: a damaged file is an error, never
// silently wrong data. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/errors.h"

namespace studio {

struct IdxArray {
  std::vector<int64_t> dims;  // e.g. {60000, 28, 28} or {60000}
  std::vector<uint8_t> data;  // unsigned bytes, row-major
};

// Reads an unsigned-byte IDX file with `expectedRank` dimensions. Throws
// DataError naming the file when it is missing, not IDX, of another rank,
// truncated, longer than its header says, or (gzip) damaged. The declared
// size is checked against the file before anything is allocated.
IdxArray readIdxFile(const std::string& path, int expectedRank);

// Only the header's dimensions.
std::vector<int64_t> readIdxDims(const std::string& path, int expectedRank);

// The header and the first `items` items (all when the file holds fewer):
// dims[0] is how many were read. Nothing after them is inflated (the Data
// tab's samples of Fashion-MNIST: a few kilobytes, not 47 MB), so a damage
// after them goes unseen; the run's own read (readIdxFile) checks it all.
IdxArray readIdxFirst(const std::string& path, int expectedRank, int64_t items);

}  // namespace studio
