#pragma once
// A feature of the training loop that owns its state and its part of the
// checkpoint, called by the loops at fixed points (Lightning's Callback).
// Every hook runs on the host between steps, never inside the recorded step
// (a CUDA graph replays the step alone).
//
// The callbacks run in the order of the registry (callbacks/registry.cpp):
//   1. weight_average     (train.ema)
//   2. nonfinite_policy   (train.on_nonfinite)
//   3. early_stopping     (train.early_stopping)
//   4. checkpointing      (the best and last checkpoints)
//   5. heap_trim
//   6. finetune           (train.finetune: frozen layer groups, their rates)
// so at an evaluation the average is evaluated before the record is posted,
// early stopping judges it before checkpointing writes the best checkpoint,
// and the early stop is posted after that checkpoint.
// Each hook gets a CallbackView (callback_view.h): the parts of the run
// callbacks act on, not the whole RunContext.
// Adding one: a file in this folder that defines its class and its make
// function, and one line in the registry. Figures it must keep across a
// resume go in CheckpointState::callbackFigures under its own names (save
// and load), with no change to the checkpoint's code.
// Thread: engine thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "run/checkpoint_state.h"
#include "studio/metric_record.h"
#include "studio/session.h"
#include "train/callbacks/callback_view.h"
#include "train/run_context.h"

namespace studio {

struct CheckpointParts;

// An evaluation as the callbacks judge it.
struct EvalVerdict {
  Figures figures;
  bool validation = false;  // of the validation split (else the test split)
  // Early stopping's judgement, when it is on: the best checkpoint is the
  // best by its metric.
  std::optional<bool> improvedByMetric;
};

class TrainCallback {
 public:
  virtual ~TrainCallback() = default;
  // Once the run is set up (model, optimizer, schedule, and a resumed run's
  // position), before its first step.
  virtual void onTrainStart(CallbackView&) {}
  // After each optimizer step of training (its figures still on the device).
  virtual void onStepEnd(CallbackView&) {}
  // Each training record as a flush brings it to the host; `nonfinite`: the
  // run's non-finite steps up to and including it.
  virtual void onTrainRecord(CallbackView&, const MetricRecord&, int64_t nonfinite) {}
  // After each flush of the metric window.
  virtual void onFlushed(CallbackView&) {}
  // An evaluation: figures added to its record before it is posted.
  virtual void onEvaluation(CallbackView&, bool validation, MetricRecord&) {}
  // Then judged and acted on (the checkpoints).
  virtual void onEvaluated(CallbackView&, EvalVerdict&) {}
  // Then what ends the evaluation.
  virtual void afterEvaluation(CallbackView&, const EvalVerdict&) {}
  // After a step's commands and the ranks' agreement; true when it moved
  // the run's position (the loop then starts the epoch again there).
  virtual bool onStepChecked(CallbackView&) { return false; }
  // Checkpoints: the tensors it keeps in them, its figures before one is
  // written, and its figures after one is read (resume, rollback).
  virtual void addTo(CheckpointParts&) {}
  virtual void save(CheckpointState&) const {}
  virtual void load(const CheckpointState&) {}
  // continue: more steps after the plan's end.
  virtual void onContinue(CallbackView&) {}
  // The final test evaluation of a run that ended by its plan or an early stop.
  virtual void onFinalTest(CallbackView&, RunSummary&) {}
  // Its figures in the run's summary.
  virtual void onRunEnd(const CallbackView&, RunSummary&) const {}
};

// The run's callbacks, called in order.
class CallbackList {
 public:
  explicit CallbackList(std::vector<std::unique_ptr<TrainCallback>> callbacks);
  void onTrainStart(RunContext& ctx);
  void onStepEnd(RunContext& ctx);
  void onTrainRecord(RunContext& ctx, const MetricRecord& r, int64_t nonfinite);
  void onFlushed(RunContext& ctx);
  void onEvaluation(RunContext& ctx, bool validation, MetricRecord& r);
  void onEvaluated(RunContext& ctx, EvalVerdict& v);
  void afterEvaluation(RunContext& ctx, const EvalVerdict& v);
  bool onStepChecked(RunContext& ctx);
  void addTo(CheckpointParts& parts);
  void save(CheckpointState& state) const;
  void load(const CheckpointState& state);
  void onContinue(RunContext& ctx);
  void onFinalTest(RunContext& ctx, RunSummary& s);
  void onRunEnd(const RunContext& ctx, RunSummary& s) const;

 private:
  std::vector<std::unique_ptr<TrainCallback>> m_callbacks;
};

// The callbacks that apply to the run's settings, in the registry's order.
std::unique_ptr<CallbackList> makeCallbacks(RunContext& ctx);

}  // namespace studio
