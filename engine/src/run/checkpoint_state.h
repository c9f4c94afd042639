#pragma once
// The figures a checkpoint holds beside its tensors, grouped by who owns
// them: the run's position and learning-rate changes (the training loop),
// the best accuracy (checkpointing) and the non-finite counts (the
// non-finite policy). On disk they are one "counters" dictionary
// (run/checkpoint.cpp), as before. A callback keeps its figures in
// `callbackFigures` under names of its own (early stopping's included), with
// no change here or in checkpoint.cpp.
// Thread: engine thread.

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace studio {

struct RunPosition {
  int64_t step = 0;          // optimizer steps done
  int64_t epoch = 0;         // current epoch
  int64_t batchInEpoch = 0;  // next micro-batch of the current epoch
  // memory.oom_backoff: each loader batch runs in this many forward passes.
  int64_t microSplit = 1;
  // The processes that trained it (torchrun's WORLD_SIZE): a position in
  // an epoch means something only with the same number.
  int64_t worldSize = 1;
  double wallSeconds = 0;
};

// The learning rate as the person changed it during the run.
struct LrAdjustments {
  double multiplier = 1.0;  // from set-learning-rate commands and rollbacks
  nlohmann::json changes = nlohmann::json::array();
};

struct NonfiniteCounts {
  int64_t steps = 0;  // steps whose loss or gradients were not finite
  int64_t rollbacks = 0;
};

struct CheckpointState {
  RunPosition position;
  LrAdjustments lr;
  // The best evaluation score so far (accuracy, or a regression's R²);
  // -infinity before the first (-1 in checkpoints of earlier versions).
  double bestAccuracy = -std::numeric_limits<double>::infinity();
  NonfiniteCounts nonfinite;
  // The callbacks' figures, each name prefixed with its callback's
  // ("early_stopping.best", "plateau.best"); whole numbers are exact up to
  // 2^53. On disk the "callback_figures" dictionary, there only when a
  // callback wrote one; early stopping's, older than it, keep their places
  // in "counters" (run/checkpoint.cpp).
  std::map<std::string, double> callbackFigures;
  std::string runId;  // the run that saved it (run_info.run_id; "" before it existed)
};

}  // namespace studio
