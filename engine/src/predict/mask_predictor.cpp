// A segmentation run's segmenter on new photos (studio/mask_predict.h): the
// Predictor's hooks for task.kind segmentation.
#include "studio/mask_predict.h"

#include <chrono>
#include <filesystem>
#include <numeric>

#include "data/augment.h"
#include "data/decoded_images.h"
#include "data/mask_augment.h"
#include "predict/predict_inputs.h"
#include "predict/predictor_impl.h"
#include "run/run_recorder.h"
#include "segmentation/segmenters.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/mask_file.h"
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
    if (!annotations.empty() && !fs::is_directory(annotations, ec))
      throw InputError("--annotations " + annotations +
                       ": a segmentation run's annotations are a folder of PNG masks with the images' relative paths "
                       "and stems");
    std::vector<std::string> names;
    for (const auto& f : files)
      names.push_back(folder ? fs::relative(f, input, ec).generic_string() : fs::path(f).filename().string());
    return predictPhotos(files, names, annotations, progress);
  }

  PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) override {
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(fs::path(f).filename().string());
    return predictPhotos(files, names, "", progress);
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
                                 const std::string& annotations, const PredictProgress& progress) {
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
        if (!annotations.empty()) {
          fs::path truthFile = fs::path(annotations) / names[i];
          truthFile.replace_extension(".png");
          if (fs::exists(truthFile)) {
            const Mask truth = decodeMaskFile(truthFile.string());
            if (const std::string problem =
                    maskProblem(truth, truthFile.string(), row.height, row.width, k, static_cast<int>(ignoreIndex));
                !problem.empty())
              throw DataError(problem);
            matrix.add(truth.values.data(), mask.values.data(), static_cast<int64_t>(mask.values.size()));
            ++r.labelled;
          }
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
