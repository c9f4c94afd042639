#include "studio/dataset_info.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <zlib.h>

namespace studio {

std::string findDataFile(const std::string& root, const std::string& stem) {
  namespace fs = std::filesystem;
  for (const std::string& name : {stem + ".gz", stem}) {
    fs::path p = fs::path(root) / name;
    if (fs::exists(p)) return p.string();
  }
  throw DataError("data file " + (fs::path(root) / (stem + ".gz")).string() +
                  " not found (nor without .gz); set data.root to the folder holding the " +
                  "MNIST-format files (Debian: apt install dataset-fashion-mnist)");
}

int64_t countTrainExamples(const DataConfig& data) {
  const std::string path = findDataFile(data.root, "train-labels-idx1-ubyte");
  // gzread reads plain files as they are, so one path serves both.
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  unsigned char header[8];
  if (!f || gzread(f.get(), header, sizeof header) != static_cast<int>(sizeof header))
    throw DataError("cannot read the header of " + path);
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08 || header[3] != 1)
    throw DataError(path + " is not an IDX labels file (wrong magic number)");
  int64_t n = (int64_t{header[4]} << 24) | (int64_t{header[5]} << 16) | (int64_t{header[6]} << 8) | header[7];
  if (data.train_limit > 0) n = std::min(n, data.train_limit);
  return n - std::max<int64_t>(heldOutCount(data.val_fraction, n), 0);
}

}  // namespace studio
