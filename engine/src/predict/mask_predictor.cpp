// A segmentation run's segmenter on new photos (studio/mask_predict.h): the
// Predictor's hooks for task.kind segmentation.
#include "studio/mask_predict.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "data/augment.h"
#include "data/decoded_images.h"
#include "data/mask_augment.h"
#include "predict/predict_inputs.h"
#include "predict/predictor_impl.h"
#include "run/run_recorder.h"
#include "segmentation/segmenters.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/mask_file.h"
#include "studio/plan_masks.h"
#include "studio/run_layout.h"

namespace studio {
namespace fs = std::filesystem;

struct MaskPredict : Predictor::Impl {
  int64_t baseSize = 0, ignoreIndex = 255;

  void setUp(const nlohmann::json& info) override {
    classes = info.at(run_files::run_info::kClasses).get<std::vector<std::string>>();
    baseSize = config.model.segmenter.base_size;
    ignoreIndex = config.data.ignore_index;
  }

  void ready(const nlohmann::json& info) override {
    transform.norm = Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()),
                                             /*image=*/true, 3, device);
  }

  PredictionReport predict(const std::string& input, const std::string& annotations,
                           const PredictProgress& progress) override {
    const std::vector<std::string> files = listImageInputs(input, {}).files;
    std::error_code ec;
    const bool folder = fs::is_directory(input, ec);
    if (!annotations.empty() && !folder)
      throw InputError("--input " + input + " is not a folder: with --annotations, give the folder its images are in");
    if (!annotations.empty() && !fs::exists(annotations, ec))
      throw InputError("--annotations " + annotations + " does not exist");
    std::vector<std::string> names;
    for (const auto& f : files)
      names.push_back(folder ? fs::relative(f, input, ec).generic_string() : fs::path(f).filename().string());
    return predictPhotos(files, names, annotations.empty() ? Truth{} : truthOf(input, annotations), progress);
  }

  // Each image's true mask, by its path: the annotations read as a run reads
  // data.annotations under data.root (a folder of PNG masks or a COCO
  // instances JSON under the input folder, or a YOLO data.yaml under its own
  // folder), with the run's classes.
  // (the mask, where it comes from: its PNG, or the annotations' image)
  using Truth = std::function<std::optional<std::pair<Mask, std::string>>(const std::string& file)>;
  Truth truthOf(const std::string& input, const std::string& annotations) const {
    TrainConfig c = config;
    c.data.format = DataFormat::image_folder;
    // A YOLO data.yaml names its images and splits from its own folder; the others from the input's.
    const std::string ext = fs::path(annotations).extension().string();
    c.data.root = ext == ".yaml" || ext == ".yml" ? fs::absolute(annotations).parent_path().string() : input;
    c.data.annotations = annotations;
    c.data.test_fraction = 0.5;  // the plan's splits do not matter here: every item is looked up
    c.data.val_fraction = 0;
    c.data.train_limit = c.data.test_limit = 0;
    c.data.class_names = classes;
    auto plan = std::make_shared<DataPlan>();
    try {
      *plan = planData(c);
    } catch (const DataError& e) {
      throw DataError("--annotations " + annotations + ": " + e.what() +
                      " (the run's classes: " + std::to_string(classes.size()) + ", the background first)");
    }
    auto items = std::make_shared<std::map<std::string, int64_t>>();
    std::error_code ec;
    for (size_t i = 0; i < plan->files.size(); ++i)
      (*items)[fs::weakly_canonical(plan->files[i], ec).string()] = static_cast<int64_t>(i);
    return [plan, items](const std::string& file) -> std::optional<std::pair<Mask, std::string>> {
      std::error_code e;
      const auto at = items->find(fs::weakly_canonical(file, e).string());
      if (at == items->end()) return std::nullopt;
      return std::pair(itemMask(*plan, at->second), itemMaskSource(*plan, at->second));
    };
  }

  PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) override {
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(fs::path(f).filename().string());
    return predictPhotos(files, names, Truth{}, progress);
  }

  // One image's classes per pixel, uint8 [h, w] at the file's own size.
  torch::Tensor segment(const std::string& file) {
    const ImageHeader header = readImageHeader(file);
    const torch::Tensor pixels = decodeImageTensor(file, 3, header.height, header.width);
    const int64_t h = pixels.size(1), w = pixels.size(2);
    const auto [outH, outW] = shorterSideSize(h, w, baseSize);
    const torch::Tensor resized = (outH == h && outW == w) ? pixels : resizedCropPixels(pixels, 0, 0, h, w, outH, outW);
    const torch::Tensor x = transformBatch(resized.unsqueeze(0).to(device), transform, 0, /*augment=*/false);
    const torch::Tensor logits = upsampled(model->forward(x).to(torch::kFloat32), {h, w});
    return logits.argmax(1)[0].to(torch::kUInt8).cpu().contiguous();
  }

  PredictionReport predictPhotos(const std::vector<std::string>& files, const std::vector<std::string>& names,
                                 const Truth& truthOf, const PredictProgress& progress) {
    const auto start = std::chrono::steady_clock::now();
    PredictionReport r = emptyReport();
    c10::InferenceMode guard;
    model->setTraining(false);
    const auto k = static_cast<int64_t>(classes.size());
    ConfusionMatrix matrix(k);
    for (size_t i = 0; i < files.size(); ++i) {
      PredictionRow row;
      row.source = files[i];
      row.name = names[i];
      try {
        const torch::Tensor found = segment(files[i]);
        row.height = found.size(0);
        row.width = found.size(1);
        Mask mask{row.height, row.width,
                  std::vector<uint8_t>(found.data_ptr<uint8_t>(), found.data_ptr<uint8_t>() + found.numel())};
        std::vector<int64_t> pixels(static_cast<size_t>(k), 0);
        for (const uint8_t v : mask.values) ++pixels[v];
        std::vector<int64_t> order(static_cast<size_t>(k));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pixels[a] > pixels[b]; });
        for (const int64_t c : order)
          if (pixels[static_cast<size_t>(c)] > 0) {
            row.top.push_back(c);
            row.probability.push_back(static_cast<float>(pixels[static_cast<size_t>(c)]) /
                                      static_cast<float>(mask.values.size()));
          }
        if (truthOf)
          if (const auto truth = truthOf(files[i])) {
            const auto& [values, source] = *truth;
            if (const std::string problem =
                    maskProblem(values, source, row.height, row.width, k, static_cast<int>(ignoreIndex));
                !problem.empty())
              throw DataError(problem);
            matrix.add(values.values.data(), mask.values.data(), static_cast<int64_t>(mask.values.size()));
            ++r.labelled;
          }
        if (!options.masksDir.empty()) {
          fs::path out = fs::path(options.masksDir) / names[i];
          out.replace_extension(".png");
          fs::create_directories(out.parent_path());
          writeMaskPng(out.string(), mask, vocPalette());
          ++r.masksWritten;
        }
        if (options.keepMasks) r.masks.push_back(std::move(mask));
      } catch (const std::exception& e) {
        if (!options.skipBad) throw;
        row.error = e.what();
        ++r.skipped;
        if (options.keepMasks && r.masks.size() < r.rows.size() + 1) r.masks.emplace_back();
      }
      r.rows.push_back(std::move(row));
      if (progress && !progress(static_cast<int64_t>(i) + 1, static_cast<int64_t>(files.size()))) break;
    }
    if (r.labelled > 0) {
      r.evaluated = true;
      r.segmentation = segmentationFigures(matrix);
      for (int64_t t = 0; t < k; ++t) {
        r.confusion.emplace_back();
        for (int64_t p = 0; p < k; ++p) r.confusion.back().push_back(matrix.at(t, p));
      }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
};

std::unique_ptr<Predictor::Impl> makeMaskPredict() { return std::make_unique<MaskPredict>(); }

bool isSegmentationRun(const std::string& folder) {
  try {
    return readRunSettings(folder).task.kind == TaskKind::segmentation;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace studio
