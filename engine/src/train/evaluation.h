#pragma once
// Evaluations during and after training, through the run's task: a split's
// figures, its report in eval/step-N.json, and a training evaluation (the
// metric window flushed, the record posted, the callbacks judging it).
// Thread: engine thread.

#include <string>

#include "train/run_context.h"

namespace studio {

struct EvalOptions;
struct EvalOutcome;

class Evaluation {
 public:
  explicit Evaluation(RunContext& ctx) : m_ctx(ctx) {}
  // The model on the validation or test split; writes eval/step-N.json (and
  // the mistakes' thumbnails) before it returns, so a front-end that sees
  // the record finds the file.
  // weights/weightsStep: what the model holds, when not its own weights at
  // this step (the final test of the best checkpoint's), named in the report.
  Figures reported(bool validation, const std::string& weights = "", int64_t weightsStep = 0);
  // Loss and accuracy only, the phase showing `what` (the weight average).
  Figures figures(bool validation, const std::string& what);
  // An evaluation step of training: on the validation split, or the test
  // split when there is none.
  void atStep();

 private:
  // The batches reported as the phase ("evaluating on the test set", 3 of 10).
  EvalOptions options(const std::string& what);
  // task.tune_thresholds: the validation split's best-F1 thresholds are used
  // from now on, and written to thresholds.json.
  void keepThresholds(const EvalOutcome& o);
  RunContext& m_ctx;
};

}  // namespace studio
