#pragma once
// The run's own checkpoints: written from the context's position and the
// callbacks' parts (last, best, step-N), read back whole for a resume or a
// rollback.
// Thread: engine thread.

#include <string>

#include "run/checkpoint_state.h"
#include "train/run_context.h"

namespace studio {

class Checkpoints {
 public:
  explicit Checkpoints(RunContext& ctx) : m_ctx(ctx) {}
  // Write-ahead: the metric rows up to this step reach the disk first, so a
  // checkpoint never stands for steps whose rows a crash lost (resume keeps
  // the rows up to the checkpoint's step and redoes the rest). Writes
  // last.ckpt, best.ckpt when `best`, and at an evaluation with
  // output.keep_checkpoints step-N.ckpt. Nothing on ranks other than 0, nor
  // while the weights are suspect (after a non-finite step the last
  // checkpoint stays the one to go back to, or the one kept when the run stops).
  void save(bool best, bool atEvaluation = false);
  // Everything in `path` (model, optimizer, scaler, counts, the callbacks'
  // parts, random state) into the run; returns the figures read.
  CheckpointState load(const std::string& path);

 private:
  RunContext& m_ctx;
};

}  // namespace studio
