// Predictor: a run's or an export's model on new files (studio/predict.h).
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <limits>
#include <tuple>

#include "data/decoded_images.h"
#include "predict/image_batches.h"
#include "predict/predict_inputs.h"
#include "predict/predictor_impl.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/model_kinds.h"
#include "studio/run_layout.h"
#include "studio/session.h"
#include "train/device_info.h"

namespace studio {
namespace fs = std::filesystem;
using run_files::kExportFormat;

bool isExportFolder(const std::string& folder) { return fs::exists(folder + "/" + run_files::kPreprocessing); }

// The TorchScript file a folder's model loads: an export's own, or the run's model.path.
static std::string torchScriptPath(const std::string& folder, const TrainConfig& config) {
  return isExportFolder(folder) ? folder + "/" + run_files::kExportedTorchScript : config.model.path;
}

WeightsSource exportSource(const std::string& dir, WeightsChoice which, TrainConfig& config) {
  const std::string prePath = dir + "/" + run_files::kPreprocessing;
  const auto pre = nlohmann::json::parse(readFileBytes(prePath, "export file"), nullptr, false);
  if (!pre.is_object() || !pre.contains("classes") || !pre.contains("input_shape"))
    throw InputError("export file " + prePath + " is not a Training Studio export's preprocessing.json (" +
                     (pre.is_object() ? std::string("it has no \"classes\" or no \"input_shape\"")
                                      : std::string("not a JSON object")) +
                     "); export the run again with training-studio-cli export");
  const int format = pre.value("format", kExportFormat);
  if (format != kExportFormat)
    throw InputError("export " + dir + " was written by another Training Studio version (" +
                     pre.value("studio_version", std::string("unknown")) + ", preprocessing.json format " +
                     std::to_string(format) + "; this one reads format " + std::to_string(kExportFormat) +
                     "): predict with that version, or export the run again with this one");
  WeightsSource s;
  s.description = pre;
  s.checkpoint = dir + "/" + run_files::kExportedCheckpoint;
  s.weights = pre.value("weights", std::string("best"));
  s.ema = s.weights == nameOf(WeightsChoice::ema);
  if (which == WeightsChoice::ema && !s.ema)
    throw InputError("export " + dir + " holds the " + s.weights + " weights, not their moving average: export the " +
                     "run again with --which ema");
  if (nameOf(which) != s.weights && which != WeightsChoice::best && which != WeightsChoice::auto_)
    s.note = "an export holds one set of weights: the " + s.weights + " ones";
  if (isModel(config.model.kind, ModelFamily::torchscript)) config.model.path = torchScriptPath(dir, config);
  return s;
}

// An export's preprocessing.json describes its model for other programs;
// predict reads the model's own settings.json. The two must agree: a copy
// edited by hand (another mean, size, class list or threshold) is refused,
// naming what differs, rather than ignored.
void checkDescription(const std::string& dir, const nlohmann::json& pre, const TrainConfig& config,
                      const nlohmann::json& info) {
  const std::string prePath = dir + "/" + run_files::kPreprocessing;
  const nlohmann::json facts = preprocessingFacts(dir, config, info);
  auto shown = [](const nlohmann::json& v) {
    std::string t = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return t.size() > 160 ? t.substr(0, 160) + "…" : t;
  };
  for (const auto& [key, want] : facts.items()) {
    const auto got = pre.find(key);
    if (got != pre.end() && *got == want) continue;
    throw InputError("export file " + prePath + " says " + key + " " + (got == pre.end() ? "nothing" : shown(*got)) +
                     ", but its model was trained with " + shown(want) +
                     " (its settings.json): the file describes the model for other programs and predict does not "
                     "read it, so an edited copy is refused; export the run again to write it as the model is");
  }
  for (const char* key : {"resize", "center_crop", "features", "targets"})
    if (pre.contains(key) && !facts.contains(key))
      throw InputError("export file " + prePath + " says " + key + " " + shown(pre[key]) +
                       ", which its model does not have: an edited copy is refused; export the run again");
}

namespace {

// Top-k of each row, the confusion and the counts, as the probabilities come back.
void collect(PredictionReport& r, const torch::Tensor& probs, int64_t topK, std::vector<PredictionRow> rows) {
  const auto classes = static_cast<int64_t>(r.classes.size());
  const torch::Tensor p = probs.contiguous();
  const float* data = p.data_ptr<float>();
  std::vector<int64_t> order(static_cast<size_t>(classes));
  for (size_t i = 0; i < rows.size(); ++i) {
    PredictionRow& row = rows[i];
    const float* pi = data + static_cast<int64_t>(i) * classes;
    if (!row.error.empty()) {
      ++r.skipped;
      r.probabilities.insert(r.probabilities.end(), static_cast<size_t>(classes), 0.0f);
      r.rows.push_back(std::move(row));
      continue;
    }
    r.probabilities.insert(r.probabilities.end(), pi, pi + classes);
    for (int64_t c = 0; c < classes; ++c) order[static_cast<size_t>(c)] = c;
    const auto k = static_cast<size_t>(std::min(topK, classes));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](int64_t a, int64_t b) { return pi[a] > pi[b] || (pi[a] == pi[b] && a < b); });
    for (size_t j = 0; j < k; ++j) {
      row.top.push_back(order[j]);
      row.probability.push_back(pi[order[j]]);
    }
    if (row.label >= 0) {
      if (r.confusion.empty())
        r.confusion.assign(static_cast<size_t>(classes), std::vector<int64_t>(static_cast<size_t>(classes), 0));
      ++r.labelled;
      if (order[0] == row.label) ++r.correct;
      ++r.confusion[static_cast<size_t>(row.label)][static_cast<size_t>(order[0])];
    }
    r.rows.push_back(std::move(row));
  }
}

// Batches' probabilities on their way back from the device: each copied
// without blocking, read two batches later (no per-batch host sync).
class Results {
 public:
  Results(PredictionReport& report, int64_t topK, const torch::Device& device)
      : m_report(report), m_topK(topK), m_device(device) {}
  void add(const torch::Tensor& probs, std::vector<PredictionRow> rows) {
    if (!m_device.is_cuda()) {
      collect(m_report, probs, m_topK, std::move(rows));
      return;
    }
    Pending p{torch::empty(probs.sizes(), probs.options().device(torch::kCPU).pinned_memory(true)),
              c10::Event(c10::DeviceType::CUDA), std::move(rows)};
    p.host.copy_(probs, /*non_blocking=*/true);
    p.done.record(c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA).getStream(m_device));
    m_pending.push_back(std::move(p));
    while (m_pending.size() > 2) take();
  }
  void finish() {
    while (!m_pending.empty()) take();
  }

 private:
  struct Pending {
    torch::Tensor host;
    c10::Event done;
    std::vector<PredictionRow> rows;
  };
  void take() {
    m_pending.front().done.synchronize();
    collect(m_report, m_pending.front().host, m_topK, std::move(m_pending.front().rows));
    m_pending.pop_front();
  }
  PredictionReport& m_report;
  int64_t m_topK;
  torch::Device m_device;
  std::deque<Pending> m_pending;
};

}  // namespace

WeightsSource runWeightsSource(const std::string& dir, WeightsChoice which) {
  const RunCheckpoint chosen = runCheckpoint(dir, which);
  WeightsSource s;
  s.checkpoint = chosen.path;
  s.weights = nameOf(chosen.which);  // auto: the weights of the run's test figures
  s.ema = which == WeightsChoice::ema;
  if (chosen.fellBack) s.note = std::string(kNoBestCheckpoint) + ": the last one predicts";
  if (!fs::exists(s.checkpoint))
    throw CheckpointError("run " + dir + " has no checkpoint yet (" + run_files::kLastCheckpoint +
                          "), so no trained weights to predict with: a run saves one at each evaluation, every "
                          "output.checkpoint_every_steps and when it ends or stops (in the window, pausing a live run "
                          "saves its current weights for the Predict tab)");
  return s;
}

void checkCommonOptions(const PredictOptions& options) {
  if (!options.which.known())
    throw InputError("predict: which weights must be " + namesText(options.which) + " (got \"" + options.which.name() +
                     "\")");
  if (options.batchSize < 1)
    throw InputError("predict: --batch-size must be at least 1 (got " + std::to_string(options.batchSize) + ")");
}

torch::Tensor TensorPredict::normalise(const torch::Tensor& raw) const {
  return transformBatch(raw.to(device, /*non_blocking=*/true), transform, 0, /*augment=*/false);
}

torch::Tensor TensorPredict::inputPixels(const std::string& file) const {
  const torch::Tensor pixels = decodeImageTensor(file, input.channels, stored.height, stored.width, stored.cover);
  return centreCrop(pixels, input.height, input.width).contiguous();
}

std::pair<int64_t, int64_t> TensorPredict::decodedSize() const {
  if (stored.larger(input)) return {stored.height, stored.width};  // five-crop's corners from it too
  if (options.tta != TestTimeAugmentation::five_crop) return {input.height, input.width};
  return {std::lround(static_cast<double>(input.height) * 8 / 7),
          std::lround(static_cast<double>(input.width) * 8 / 7)};
}

torch::Tensor TensorPredict::probabilities(const torch::Tensor& x) {
  const int64_t n = x.size(0);
  if (options.tta == TestTimeAugmentation::five_crop && images()) {
    // torchvision's FiveCrop: the corners, then the centre (CenterCrop's offsets).
    const int64_t h = input.height, w = input.width, dh = x.size(2) - h, dw = x.size(3) - w;
    auto crop = [&](int64_t y, int64_t x0) { return x.narrow(2, y, h).narrow(3, x0, w); };
    const torch::Tensor all = torch::cat({crop(0, 0), crop(0, dw), crop(dh, 0), crop(dh, dw), centreCrop(x, h, w)});
    return torch::softmax(model->forward(all).to(torch::kFloat32), 1).view({5, n, -1}).mean(0);
  }
  if (options.penultimate && options.tta == TestTimeAugmentation::none && images()) {
    torch::Tensor features;
    const torch::Tensor logits = model->forwardWithFeatures(x, features);
    if (features.defined()) penultimate.push_back(features.to(torch::kCPU, torch::kFloat32));
    return torch::softmax(logits.to(torch::kFloat32), 1);
  }
  if (options.tta == TestTimeAugmentation::flip && images()) {
    // One forward of both: each example's figures do not depend on the others (eval mode).
    const torch::Tensor p = torch::softmax(model->forward(torch::cat({x, x.flip({3})})).to(torch::kFloat32), 1);
    return (p.narrow(0, 0, n) + p.narrow(0, n, n)).div_(2);
  }
  return torch::softmax(model->forward(x).to(torch::kFloat32), 1);
}

PredictionReport TensorPredict::predictImages(const std::vector<std::string>& files, const std::vector<int64_t>& labels,
                                              const PredictProgress& progress) {
  if (!images()) throw InputError("this model takes a CSV table's rows, not image files");
  const auto start = std::chrono::steady_clock::now();
  PredictionReport r = emptyReport();
  if (files.empty()) return r;
  ImageBatchOptions o;
  o.channels = input.channels;
  std::tie(o.height, o.width) = decodedSize();
  o.cover = stored.cover;
  if (options.tta == TestTimeAugmentation::five_crop) {
    o.largerThanHeight = input.height;
    o.largerThanWidth = input.width;
  }
  o.batchSize = options.batchSize;
  o.workers = options.workers;
  o.pinned = device.is_cuda();
  ImageBatches batches(files, o);
  c10::InferenceMode guard;
  Results results(r, options.topK, device);
  // A pinned batch is given back to the decoders once its copy is done.
  std::deque<std::pair<int64_t, c10::Event>> copying;
  const auto total = static_cast<int64_t>(files.size());
  for (int64_t b = 0; b < batches.batches(); ++b) {
    std::vector<std::string> errors;
    const torch::Tensor pixels = batches.wait(b, errors);
    const int64_t first = batches.batchBegin(b);
    std::vector<PredictionRow> rows(errors.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].source = files[static_cast<size_t>(first) + i];
      rows[i].error = errors[i];
      if (!labels.empty()) rows[i].label = labels[static_cast<size_t>(first) + i];
      if (!errors[i].empty() && !options.skipBad)
        throw DataError(errors[i] + " (give --on-bad-file skip to predict the other files)");
    }
    const torch::Tensor x = normalise(pixels);
    if (device.is_cuda()) {
      c10::Event copied(c10::DeviceType::CUDA);
      copied.record(c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA).getStream(device));
      copying.emplace_back(b, std::move(copied));
      while (copying.size() > 1) {
        copying.front().second.synchronize();
        batches.release(copying.front().first);
        copying.pop_front();
      }
    } else {
      batches.release(b);
    }
    if (targets.empty())
      results.add(probabilities(x), std::move(rows));
    else
      addValues(r, valuesOf(x), std::move(rows));  // a regression's or multi-label's
    if (progress && !progress(first + static_cast<int64_t>(errors.size()), total)) break;
  }
  results.finish();
  if (!penultimate.empty()) {
    const torch::Tensor all = torch::cat(penultimate).contiguous();
    penultimate.clear();
    r.penultimateSize = all.size(1);
    r.penultimate.assign(all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

torch::Tensor TensorPredict::valuesOf(const torch::Tensor& x) {
  // The outputs in the data's units, or the labels' probabilities as the
  // evaluation computes them; one sync a batch.
  const torch::Tensor out = model->forward(x).to(torch::kCPU, torch::kFloat32);
  return (targetMean.defined() ? out.to(torch::kFloat64) * targetStd + targetMean : torch::sigmoid(out))
      .to(torch::kFloat32)
      .contiguous();
}

void TensorPredict::addValues(PredictionReport& r, const torch::Tensor& v, std::vector<PredictionRow> rows) {
  const auto width = static_cast<int64_t>(targets.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const float* p = v.data_ptr<float>() + static_cast<int64_t>(i) * width;
    if (!rows[i].error.empty()) ++r.skipped;
    for (int64_t k = 0; k < width; ++k)
      r.values.push_back(rows[i].error.empty() ? p[k] : std::numeric_limits<float>::quiet_NaN());
    r.rows.push_back(std::move(rows[i]));
  }
}

void TensorPredict::predictValues(const torch::Tensor& all, const TableInputs& t, PredictionReport& r,
                                  const PredictProgress& progress) {
  for (int64_t b = 0; b < t.rows; b += options.batchSize) {
    const int64_t n = std::min(options.batchSize, t.rows - b);
    std::vector<PredictionRow> rows(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      rows[static_cast<size_t>(i)].source = t.sources[static_cast<size_t>(b + i)];
      rows[static_cast<size_t>(i)].error = t.errors[static_cast<size_t>(b + i)];
    }
    addValues(r, valuesOf(normalise(all.narrow(0, b, n))), std::move(rows));
    if (progress && !progress(b + n, t.rows)) break;
  }
}

PredictionReport TensorPredict::emptyReport() const {
  PredictionReport r = Impl::emptyReport();
  r.targets = targets;
  if (config.task.kind == TaskKind::multilabel) {
    r.thresholds = thresholds;
    r.tagSeparator = config.data.tag_separator;
  }
  return r;
}

void TensorPredict::setUp(const nlohmann::json& info) {
  input = inputShapeFromRunInfo(info);
  stored = storedShapeFromRunInfo(info);
  classes = info.at(run_files::run_info::kClasses).get<std::vector<std::string>>();
  features = info.value(run_files::run_info::kFeatures, std::vector<std::string>{});
  if (const auto t = info.find(run_files::run_info::kTargets); t != info.end() && t->is_object()) {
    targets = t->value("names", std::vector<std::string>{});
    if (config.task.kind == TaskKind::multilabel) thresholds = labelThresholds(folder, config, targets);
    if (options.tta != TestTimeAugmentation::none)
      throw InputError("predict: --tta averages a classifier's class probabilities; this run's task is " +
                       config.task.kind + ": predict without it");
    if (config.task.kind != TaskKind::multilabel) {
      const auto mean = t->value("mean", std::vector<double>{}), std = t->value("std", std::vector<double>{});
      if (mean.size() != targets.size() || std.size() != targets.size())
        throw InputError("settings.json's run_info.targets of " + folder + " has no mean and std for each target");
      targetMean = torch::tensor(mean, torch::kFloat64);
      targetStd = torch::tensor(std, torch::kFloat64);
    }
  }
}

void TensorPredict::ready(const nlohmann::json& info) {
  transform.norm = Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()),
                                           images(), images() ? input.channels : input.features, device);
  if (stored.larger(input) && options.tta != TestTimeAugmentation::five_crop) {
    // Images decoded as the run stored them; the evaluation's centre crop.
    transform.cropHeight = input.height;
    transform.cropWidth = input.width;
  }
}

std::string torchScriptFileOf(const std::string& folder) {
  try {
    const TrainConfig c = readRunSettings(folder);
    if (!isModel(c.model.kind, ModelFamily::torchscript)) return "";
    return torchScriptPath(folder, c);
  } catch (const std::exception&) {
    return "";
  }
}

PredictionReport TensorPredict::predict(const std::string& in, const std::string& annotations,
                                        const PredictProgress& progress) {
  if (!annotations.empty())
    throw InputError("--annotations gives a detector's boxes; run " + folder + " is not a detection run");
  if (images()) {
    const ImageInputs listed = listImageInputs(in, classes);
    return predictImages(listed.files, listed.labels, progress);
  }
  const auto start = std::chrono::steady_clock::now();
  if (fs::is_directory(in)) throw DataError("input " + in + " is a folder; this model takes a CSV table's rows");
  const TableInputs t =
      readTableInputs(in, features, config.data.label_column, config.data.ignore_columns, classes, options.skipBad);
  PredictionReport r = emptyReport();
  r.features = t.x;
  c10::InferenceMode guard;
  const torch::Tensor all = torch::from_blob(const_cast<float*>(t.x.data()), {t.rows, t.features}, torch::kFloat32);
  if (!targets.empty()) {
    predictValues(all, t, r, progress);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  Results results(r, options.topK, device);
  for (int64_t b = 0; b < t.rows; b += options.batchSize) {
    const int64_t n = std::min(options.batchSize, t.rows - b);
    std::vector<PredictionRow> rows(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      rows[static_cast<size_t>(i)].source = t.sources[static_cast<size_t>(b + i)];
      rows[static_cast<size_t>(i)].label = t.labels[static_cast<size_t>(b + i)];
      rows[static_cast<size_t>(i)].error = t.errors[static_cast<size_t>(b + i)];
    }
    results.add(probabilities(normalise(all.narrow(0, b, n))), std::move(rows));
    if (progress && !progress(b + n, t.rows)) break;
  }
  results.finish();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace studio
