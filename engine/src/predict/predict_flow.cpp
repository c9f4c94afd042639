// Predictor (studio/predict.h): one flow for every task kind. The run's
// settings, weights and model are loaded here, the same for every task;
// what a prediction is comes from the task's hooks (predictor_impl.h).
#include <filesystem>

#include "predict/predictor_impl.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/errors.h"
#include "studio/run_layout.h"
#include "train/device_info.h"

namespace studio {
namespace fs = std::filesystem;

std::unique_ptr<Predictor::Impl> makePredictTask(TaskKind kind) {
  if (boxesTask(kind)) return makeBoxPredict();
  if (kind == TaskKind::segmentation) return makeMaskPredict();
  return std::make_unique<TensorPredict>();
}

PredictionReport Predictor::Impl::emptyReport() const {
  PredictionReport r;
  r.task = config.task.kind;
  r.model = description;
  r.weights = weights;
  r.note = note;
  r.device = describeDevice(device);
  r.input = inputKind();
  r.classes = classes;
  return r;
}

GradCamMap Predictor::Impl::gradCam(const std::string&, int64_t) {
  throw InputError("Grad-CAM explains a class of an image model; " + description + " gives " + config.task.kind +
                   " predictions");
}

FeatureAttribution Predictor::Impl::attributions(const std::vector<float>&, int64_t) {
  throw InputError("feature attributions explain table models; " + description + " takes images");
}

Predictor::Predictor(const std::string& folder, const PredictOptions& options) {
  checkCommonOptions(options);
  if (!options.tta.known())
    throw InputError("predict: --tta must be " + namesText(options.tta) + " (got \"" + options.tta.name() + "\")");
  if (options.topK < 1)
    throw InputError("predict: --top-k must be at least 1 (got " + std::to_string(options.topK) + ")");
  if (!fs::is_directory(folder)) throw InputError("run or export folder " + folder + " not found");
  const bool isExport = isExportFolder(folder);
  if (!isExport && !fs::exists(folder + "/" + run_files::kSettings))
    throw InputError("folder " + folder + " is neither a run folder (no " + run_files::kSettings +
                     ") nor an export (no preprocessing.json)");
  TrainConfig config = readRunSettings(folder);
  const nlohmann::json info = readRunInfo(folder);
  if (info.contains(run_files::run_info::kProbe))
    throw InputError("run " + folder + " is a " + info[run_files::run_info::kProbe].get<std::string>() +
                     " probe, not a trained model: predict with a training run");
  m = makePredictTask(config.task.kind.value());
  m->options = options;
  m->folder = folder;
  m->config = std::move(config);
  const WeightsSource source = isExport ? exportSource(folder, options.which.value(), m->config)
                                        : runWeightsSource(folder, options.which.value());
  m->weights = source.weights;
  m->note = source.note;
  m->setUp(info);
  if (isExport) checkDescription(folder, source.description, m->config, info);
  m->device = resolveDevice(options.device);
  m->model = makeModel(m->config.model, inputShapeFromRunInfo(info), outputsFromRunInfo(info));
  loadModelWeights(source.checkpoint, *m->model, source.ema);
  requireFiniteWeights(*m->model, source.checkpoint);
  m->model->to(m->device);
  m->model->setTraining(false);
  m->description = m->model->description() + ", " + m->weights + " weights of " + folder;
  m->ready(info);
}

Predictor::~Predictor() = default;

const std::vector<std::string>& Predictor::classes() const { return m->classes; }
PredictInput Predictor::input() const { return m->inputKind(); }
std::string Predictor::description() const { return m->description; }
TaskKind Predictor::task() const { return m->config.task.kind.value(); }

PredictionReport Predictor::predict(const std::string& input, const PredictProgress& progress) {
  return m->predict(input, "", progress);
}

PredictionReport Predictor::predict(const std::string& input, const std::string& annotations,
                                    const PredictProgress& progress) {
  return m->predict(input, annotations, progress);
}

PredictionReport Predictor::predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) {
  return m->predictFiles(files, progress);
}

GradCamMap Predictor::gradCam(const std::string& imageFile, int64_t classIndex) {
  return m->gradCam(imageFile, classIndex);
}

FeatureAttribution Predictor::attributions(const std::vector<float>& rawFeatures, int64_t classIndex) {
  return m->attributions(rawFeatures, classIndex);
}

}  // namespace studio
