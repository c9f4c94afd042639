#include "studio/dataset_info.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <zlib.h>

namespace studio {

int64_t countTrainExamples(const DataConfig& data) {
  namespace fs = std::filesystem;
  std::string path;
  for (const char* name : {"train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte"}) {
    if (fs::exists(fs::path(data.root) / name)) {
      path = (fs::path(data.root) / name).string();
      break;
    }
  }
  if (path.empty())
    throw std::runtime_error("data file " + (fs::path(data.root) / "train-labels-idx1-ubyte.gz").string() +
                             " not found (nor without .gz); set data.root to the folder holding the "
                             "MNIST-format files");
  // gzread reads plain files as they are, so one path serves both.
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  unsigned char header[8];
  if (!f || gzread(f.get(), header, sizeof header) != static_cast<int>(sizeof header))
    throw std::runtime_error("cannot read the header of " + path);
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08 || header[3] != 1)
    throw std::runtime_error(path + " is not an IDX labels file (wrong magic number)");
  int64_t n = (int64_t{header[4]} << 24) | (int64_t{header[5]} << 16) | (int64_t{header[6]} << 8) | header[7];
  if (data.train_limit > 0) n = std::min(n, data.train_limit);
  const auto held = static_cast<int64_t>(data.val_fraction * static_cast<double>(n));
  return n - std::max<int64_t>(held, 0);
}

}  // namespace studio
