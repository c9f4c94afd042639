#pragma once
// Checkpoints: model, optimizer, loss scaler, position (step, epoch, batch in
// the epoch), learning-rate changes and RNG states, so a resumed run
// continues exactly where it stopped. Written to a temporary file and
// renamed: a crash never leaves a torn checkpoint.
// The file is data only (tensors/tensor_archive.h: torch.save's format with a
// checksum, read without running anything in it); Python reads it with
// torch.load(path), weights_only=True.
// Thread: engine thread.

#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "models/model.h"
#include "optim/ema_weights.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/checkpoint_state.h"
#include "studio/run_layout.h"
#include "tensors/tensor_archive.h"

namespace studio {

struct CheckpointParts {
  Model& model;
  Optimizer& optimizer;
  LossScaler& scaler;
  torch::Tensor& skipped;
  CheckpointState& state;  // the figures (position, learning-rate changes, the callbacks')
  EmaWeights* ema;         // train.ema, or nullptr
};

// Writes the same checkpoint to each path (last, and best when it is).
void saveCheckpoint(const std::vector<std::string>& paths, CheckpointParts parts);

// A checkpoint read and checked once, to take several parts from (a fork).
// Throws CheckpointError naming the file when it is missing, damaged,
// carries code or is of another format version.
struct CheckpointFile {
  explicit CheckpointFile(const std::string& path);
  std::string path;
  ArchiveDict root;
};

// Throws CheckpointError naming the file when it is missing, damaged, carries
// code, or does not match the model. withOptimizer false: the optimizer and
// the loss scaler keep their own state (a fork with other settings).
void loadCheckpoint(const CheckpointFile& file, CheckpointParts parts, const torch::Device& device,
                    bool withOptimizer = true);
void loadCheckpoint(const std::string& path, CheckpointParts parts, const torch::Device& device,
                    bool withOptimizer = true);
// Only the optimizer's state (throws CheckpointError when it is of another
// optimizer or other parameters), or only the loss scaler's.
void loadOptimizerState(const CheckpointFile& file, Optimizer& optimizer);
void loadScalerState(const CheckpointFile& file, LossScaler& scaler);
// Only the position and figures, without a model.
CheckpointState readCheckpointState(const std::string& path);
CheckpointState readCheckpointState(const CheckpointFile& file);
// Only the model's weights, for export; ema: the weights' moving average
// (train.ema) instead, a CheckpointError when the run kept none. Returns the
// checkpoint's position and figures.
CheckpointState loadModelWeights(const std::string& path, Model& model, bool ema = false);
// For weights loaded for use (export, predict): CheckpointError naming the
// first parameter or buffer of `model` that holds a NaN or an infinity, and
// the checkpoint it came from. A checksum proves the file unchanged, not its
// numbers usable.
void requireFiniteWeights(Model& model, const std::string& path);

// The checkpoint of a run folder that `which` (auto | best | last | ema, the
// last one's moving average) reads: auto, the weights the run's headline
// test figures are of (summary.json's test_weights; best before it has
// one); best falls back to last when the run has none (fellBack;
// kNoBestCheckpoint says why). which: the weights read (best | last | ema;
// never auto).
struct RunCheckpoint {
  std::string path;
  bool fellBack = false;
  WeightsChoice which = WeightsChoice::best;
};
RunCheckpoint runCheckpoint(const std::string& runDir, WeightsChoice which);
inline constexpr const char* kNoBestCheckpoint =
    "the run has no best checkpoint (output.save_best was off, or it never evaluated)";

}  // namespace studio
