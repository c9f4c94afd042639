#include "train/checkpoints.h"

#include "run/checkpoint.h"
#include "run/crash_point.h"
#include "run/run_recorder.h"
#include "studio/errors.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"

namespace studio {

void Checkpoints::save(bool best, bool atEvaluation) {
  RunContext& c = m_ctx;
  if (c.control.weightsSuspect()) return;
  if (!c.where.writer) return;  // rank 0 writes the run's checkpoints
  Timed timed{c.times.write};
  c.position.wallSeconds = c.wallSeconds();
  CheckpointState state;
  state.position = c.position;
  state.lr = c.lr;
  state.runId = c.lineage.runId;
  c.callbacks->save(state);
  crashPoint("checkpoint-before-metrics-flush");
  c.recorder->sync();
  crashPoint("checkpoint-after-metrics-flush");
  const std::string dir = c.runDir + "/checkpoints";
  std::vector<std::string> paths{dir + "/last.ckpt"};
  if (best) paths.push_back(dir + "/best.ckpt");
  if (atEvaluation && c.cfg.output.keep_checkpoints)
    paths.push_back(c.runDir + "/" + run_files::stepCheckpoint(c.position.step));
  CheckpointParts parts = c.checkpointParts(state);
  c.callbacks->addTo(parts);
  saveCheckpoint(paths, parts);
}

CheckpointState Checkpoints::load(const std::string& path) {
  RunContext& c = m_ctx;
  // Whose it is, before its weights are tried on this run's model.
  const CheckpointFile file(path);  // read once
  const CheckpointState peek = readCheckpointState(file);
  if (!peek.runId.empty() && !c.lineage.runId.empty() && peek.runId != c.lineage.runId)
    throw CheckpointError("checkpoint " + path + " belongs to another run (run id " + peek.runId + "), not to " +
                          c.runDir + " (run id " + c.lineage.runId +
                          ", in its settings.json): it was copied here "
                          "from elsewhere; put this run's own checkpoint back, or fork the run it came from");
  CheckpointState state;
  CheckpointParts parts = c.checkpointParts(state);
  c.callbacks->addTo(parts);
  loadCheckpoint(file, parts, c.where.device);
  c.position = state.position;
  c.lr = state.lr;
  c.callbacks->load(state);
  return state;
}

}  // namespace studio
