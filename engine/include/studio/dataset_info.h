#pragma once
// What a run's data settings amount to, read from the files' headers only, so
// the window can plan the schedule before any run starts. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>

#include "studio/train_config.h"

namespace studio {

// Training examples a run with these data settings trains on: the training
// file's count, cut to data.train_limit, less the data.val_fraction held out
// (the same arithmetic as the engine's loader). Throws std::runtime_error
// naming the file when it is missing or not an IDX labels file.
int64_t countTrainExamples(const DataConfig& data);

}  // namespace studio
