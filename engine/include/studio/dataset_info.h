#pragma once
// What a run's data settings amount to, read from the files' headers only, so
// the window can plan the schedule before any run starts. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <string>

#include "studio/errors.h"
#include "studio/train_config.h"

namespace studio {

// <root>/<stem>.gz, or <root>/<stem> when only the raw file is there. Throws
// DataError naming the file and the setting to change when neither exists.
std::string findDataFile(const std::string& root, const std::string& stem);

// Images held out of n for validation by data.val_fraction.
inline int64_t heldOutCount(double valFraction, int64_t n) {
  return static_cast<int64_t>(valFraction * static_cast<double>(n));
}

// Training examples a run with these data settings trains on: the training
// file's count, cut to data.train_limit, less the data.val_fraction held out
// (heldOutCount, as the engine's loader). Throws DataError naming the
// file when it is missing or not an IDX labels file.
int64_t countTrainExamples(const DataConfig& data);

}  // namespace studio
