#pragma once
// The Predictor's one flow (predict_flow.cpp) and each task's hooks: what
// every task's predictions start from (Predictor::Impl: the run's settings,
// weights and model), a class's, values' or labels' (TensorPredict:
// predictor.cpp, grad_cam.cpp) and a detector's boxes (box_predictor.cpp).
// A new task kind adds its Impl and a line in makePredictTask.
// Thread: the Predictor's one thread.

#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/batch_loader.h"
#include "models/model.h"
#include "predict/predict_inputs.h"
#include "studio/dataset_info.h"
#include "studio/predict.h"
#include "studio/train_config.h"

namespace studio {

// Where the weights are: a run folder's checkpoint, or an export's.
struct WeightsSource {
  std::string checkpoint, weights, note;
  bool ema = false;
  nlohmann::json description;  // an export's preprocessing.json, as read (checkDescription)
};

// A run folder's checkpoint for options.which (auto: the weights of the
// run's test figures). Throws CheckpointError when the run has none yet.
WeightsSource runWeightsSource(const std::string& runDir, WeightsChoice which);

// An export folder (its preprocessing.json) rather than a run's.
bool isExportFolder(const std::string& folder);
// An export's checkpoint; its TorchScript model's path into config. Throws
// InputError for an export of another format, or weights it does not hold.
WeightsSource exportSource(const std::string& dir, WeightsChoice which, TrainConfig& config);
// Refuses an export whose preprocessing.json is not what its settings.json
// and run_info make (an edited copy), naming the first fact that differs.
void checkDescription(const std::string& dir, const nlohmann::json& pre, const TrainConfig& config,
                      const nlohmann::json& info);

// The options every predictor reads: which weights, the batch size.
// Throws InputError naming the one that is wrong.
void checkCommonOptions(const PredictOptions& options);

struct Predictor::Impl {
  virtual ~Impl() = default;
  PredictOptions options;
  std::string folder;
  TrainConfig config;
  std::vector<std::string> classes;
  std::string weights, note, description;
  torch::Device device{torch::kCPU};
  std::unique_ptr<Model> model;
  LoaderOptions transform;  // its normalisation, as the run's evaluations apply it (transformBatch)

  // The task's hooks, in the order the flow calls them.
  // Before the model is built: the run's facts the task reads from run_info
  // (classes, targets, categories); throws InputError for an option that
  // does not apply to this task.
  virtual void setUp(const nlohmann::json& info) = 0;
  // After its weights are loaded: how inputs are prepared (normalisation,
  // crops, placement).
  virtual void ready(const nlohmann::json& info) = 0;
  virtual PredictInput inputKind() const { return PredictInput::image; }
  // annotations: a detector's boxes; another task refuses them.
  virtual PredictionReport predict(const std::string& input, const std::string& annotations,
                                   const PredictProgress& progress) = 0;
  virtual PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) = 0;
  // Refused unless the task explains its outputs (InputError).
  virtual GradCamMap gradCam(const std::string& imageFile, int64_t classIndex);
  virtual FeatureAttribution attributions(const std::vector<float>& rawFeatures, int64_t classIndex);
  // A report of no rows yet, saying what predicts; a task adds its facts.
  virtual PredictionReport emptyReport() const;
};

// The hooks of the run's task kind.
std::unique_ptr<Predictor::Impl> makePredictTask(TaskKind kind);
std::unique_ptr<Predictor::Impl> makeBoxPredict();   // box_predictor.cpp
std::unique_ptr<Predictor::Impl> makeMaskPredict();  // mask_predictor.cpp

// Classification, regression and multi-label: a class's probabilities, a
// target's values or each label's probability, of images or a table's rows.
struct TensorPredict : Predictor::Impl {
  InputShape input;
  StoredShape stored;  // how the run stored its images (run_info.input.stored)
  std::vector<std::string> features;
  // A regression's target columns and the statistics its targets were
  // standardised with (run_info's targets).
  std::vector<std::string> targets;
  torch::Tensor targetMean, targetStd;  // a regression's; undefined for multi-label (probabilities)
  std::vector<double> thresholds;       // a multi-label's, per label

  void setUp(const nlohmann::json& info) override;
  void ready(const nlohmann::json& info) override;
  PredictInput inputKind() const override { return images() ? PredictInput::image : PredictInput::table; }
  PredictionReport predict(const std::string& input, const std::string& annotations,
                           const PredictProgress& progress) override;
  PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) override {
    return predictImages(files, {}, progress);
  }
  GradCamMap gradCam(const std::string& imageFile, int64_t classIndex) override;
  FeatureAttribution attributions(const std::vector<float>& rawFeatures, int64_t classIndex) override;
  PredictionReport emptyReport() const override;

  bool images() const { return input.features == 0; }
  // uint8 [B, C, H, W] pixels or float [B, F] features (any device) -> the model's input.
  torch::Tensor normalise(const torch::Tensor& raw) const;
  // The size images are decoded at: as the run stored them, else the
  // input's, larger for five-crop.
  std::pair<int64_t, int64_t> decodedSize() const;
  // One image file as the model takes it, uint8 [C, H, W] (decoded as the
  // run stored it, its centre at the input's size).
  torch::Tensor inputPixels(const std::string& file) const;
  // Probabilities [B, classes] (float32) of a normalised batch, with the TTA.
  torch::Tensor probabilities(const torch::Tensor& x);
  // With options.penultimate: the batches' penultimate features, in order.
  std::vector<torch::Tensor> penultimate;
  // A regression's values or a multi-label's probabilities ([B, targets],
  // float32 on the CPU) of a normalised batch, and their rows into r.
  torch::Tensor valuesOf(const torch::Tensor& x);
  void addValues(PredictionReport& r, const torch::Tensor& values, std::vector<PredictionRow> rows);
  // A regression's values for a table's rows (normalised here), into r.
  void predictValues(const torch::Tensor& features, const TableInputs& table, PredictionReport& r,
                     const PredictProgress& progress);
  // The output an explanation (Grad-CAM, attributions) is of: a classifier's
  // class (the predicted one unless asked) and its softmax probability; a
  // multi-label model's label (the most probable unless asked) and its
  // sigmoid probability; a regression's target (the first unless asked) and
  // its value in the data's units. checkOutput refuses an index past them.
  struct Explained {
    int64_t index = 0;
    float figure = 0;
    std::string name;
  };
  Explained explained(const torch::Tensor& logits, int64_t asked) const;
  void checkOutput(int64_t index, const std::string& what) const;
  // labels: one per file, or empty (none known).
  PredictionReport predictImages(const std::vector<std::string>& files, const std::vector<int64_t>& labels,
                                 const PredictProgress& progress);
};

}  // namespace studio
