#pragma once
// What a callback sees of its run (Lightning's narrow view of the trainer):
// the settings, the position and the plan to read; the loop's control and
// the learning rate's adjustments to act on; the model and optimizer it
// changes; and the services it acts through (evaluation, checkpoints, the
// metric window, the record). Not the data, the loader, the step runner, the
// placement, the lineage or the summary's state: those stay the loop's.
// Thread: engine thread.

#include <cstdint>
#include <string>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "studio/metric_record.h"
#include "studio/train_config.h"

namespace studio {

class Checkpoints;
class Evaluation;
class MetricWindow;
class Model;
class Optimizer;
class RunRecorder;
struct LoopControl;
struct LrAdjustments;
struct RunContext;
struct RunPosition;

class CallbackView {
 public:
  explicit CallbackView(RunContext& ctx) : m_ctx(ctx) {}

  // To read.
  const TrainConfig& cfg() const;
  const RunPosition& position() const;
  int64_t totalSteps() const;
  const std::string& runDir() const;
  // The learning rate that acts at a step (RunContext::lrAt).
  double lrAt(int64_t step) const;
  const LoopControl& control() const;

  // To act on.
  LoopControl& control();
  LrAdjustments& lr();
  Model& model();
  Optimizer& optimizer();
  // run_info.json's "finetune" (train.finetune's layer groups).
  nlohmann::json& finetuneInfo();
  // The run's count of non-finite steps, on the device.
  torch::Tensor& nonfiniteSteps();

  // The services.
  Evaluation& evaluation();
  Checkpoints& checkpoints();
  MetricWindow& window();
  RunRecorder* recorder();  // rank 0's; nullptr on the others
  MetricRecord record(RecordKind kind) const;
  void post(const MetricRecord& r);
  void showPosition();
  void writeSettings();  // settings.json with run_info, after a change to the rate

 private:
  RunContext& m_ctx;
};

}  // namespace studio
