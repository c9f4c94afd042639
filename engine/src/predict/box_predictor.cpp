// A detection run's detector on new photos (studio/box_predict.h): the
// Predictor's hooks for task.kind detection.
// Each image is placed as its run placed it (detection::placeImage), scaled
// to [0, 1] by the run's recorded normalisation (transformBatch, as its
// evaluations did), and the detector's boxes are divided by the image's
// scale back to its own pixels.
#include "studio/box_predict.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>

#include "data/box_data.h"
#include "data/decoded_images.h"
#include "data/instance_masks.h"
#include "detection/detector_net.h"
#include "models/model.h"
#include "predict/predict_inputs.h"
#include "predict/predictor_impl.h"
#include "run/checkpoint.h"
#include "run/export_task.h"
#include "run/run_recorder.h"
#include "studio/box_annotations.h"
#include "studio/box_checks.h"
#include "studio/coco_eval.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/run_layout.h"
#include "train/device_info.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

struct DecodedPhoto {
  torch::Tensor image;  // uint8 3 x h x w, placed as the run placed its images
  detection::Placement at;
  int64_t height = 0, width = 0;  // the file's own
  std::string error;
};

}  // namespace

struct BoxPredict : Predictor::Impl {
  std::vector<BoxCategory> categories;
  detection::RcnnTransformOptions placing;  // the model's transform: where its images go

  void setUp(const nlohmann::json& info) override {
    classes = info.at(run_files::run_info::kClasses).get<std::vector<std::string>>();
    categories = readRunCategories(folder, info);
    if (categories.size() != classes.size())
      throw InputError("run " + folder + " records " + std::to_string(categories.size()) + " categories for " +
                       std::to_string(classes.size()) + " classes: its settings.json was edited");
  }

  void ready(const nlohmann::json& info) override {
    placing = model->boxPlacement();
    transform.norm = Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()),
                                             /*image=*/true, 3, device);
  }

  PredictionReport emptyReport() const override {
    PredictionReport r = Impl::emptyReport();
    for (const auto& c : categories) r.categoryIds.push_back(c.id);
    return r;
  }

  PredictionReport predict(const std::string& input, const std::string& annotations,
                           const PredictProgress& progress) override;

  PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress) override {
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(fs::path(f).filename().string());
    return predictPhotos(files, names, {}, progress);
  }

  // want: an annotated image's size (its boxes are in it), or nullptr.
  std::vector<DecodedPhoto> decode(const std::vector<std::string>& files, size_t first, size_t n,
                                   const std::vector<const AnnotatedImage*>& annotated) const {
    std::vector<DecodedPhoto> out(n);
    const auto count = static_cast<int64_t>(n);
    const int64_t workers = options.workers > 0 ? options.workers : at::get_num_threads();
    const int64_t grain = std::max<int64_t>(1, (count + workers - 1) / workers);
    at::parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        DecodedPhoto& d = out[static_cast<size_t>(k)];
        const std::string& file = files[first + static_cast<size_t>(k)];
        try {
          const ImageHeader header = readImageHeader(file);
          const AnnotatedImage* a = annotated.empty() ? nullptr : annotated[first + static_cast<size_t>(k)];
          if (a) checkAnnotatedSize(*a, file, header.height, header.width);
          d.at = detection::poolPlacement(header.height, header.width, placing);
          d.image = torch::empty({3, d.at.height, d.at.width}, torch::kUInt8);
          std::tie(d.height, d.width) = decodeImageInto(file, 3, d.at.height, d.at.width, d.image.data_ptr<uint8_t>());
        } catch (const std::exception& e) {
          d.image = torch::Tensor();
          d.error = e.what();
        }
      }
    });
    return out;
  }

  PredictionReport predictPhotos(const std::vector<std::string>& files, const std::vector<std::string>& names,
                                 const std::vector<const AnnotatedImage*>& annotated, const PredictProgress& progress) {
    const auto start = std::chrono::steady_clock::now();
    PredictionReport r = emptyReport();
    c10::InferenceMode guard;
    const auto batch = static_cast<size_t>(options.batchSize);
    for (size_t first = 0; first < files.size(); first += batch) {
      const size_t n = std::min(batch, files.size() - first);
      std::vector<DecodedPhoto> decoded = decode(files, first, n, annotated);
      std::vector<torch::Tensor> images;
      for (size_t k = 0; k < n; ++k) {
        if (!decoded[k].error.empty()) {
          if (!options.skipBad)
            throw DataError(decoded[k].error + " (give --on-bad-file skip to predict the other files)");
          continue;
        }
        images.push_back(transformBatch(decoded[k].image.unsqueeze(0).to(device), transform, 0, false)[0]);
      }
      const std::vector<detection::Detections> found =
          images.empty() ? std::vector<detection::Detections>{} : model->detectBoxes(images);
      size_t next = 0;
      for (size_t k = 0; k < n; ++k) {
        PredictionRow row;
        row.source = files[first + k];
        row.name = names[first + k];
        if (!annotated.empty()) row.imageId = annotated[first + k]->id;
        row.height = decoded[k].height;
        row.width = decoded[k].width;
        row.error = decoded[k].error;
        if (row.error.empty()) {
          const detection::Detections& d = found[next++];
          const double scale = decoded[k].at.scale;
          const torch::Tensor b = (d.boxes.to(torch::kCPU, torch::kFloat64) / scale).contiguous();
          const torch::Tensor s = d.scores.to(torch::kCPU, torch::kFloat64).contiguous();
          const torch::Tensor l = d.labels.to(torch::kCPU).contiguous();
          const auto bb = b.accessor<double, 2>();
          const auto ss = s.accessor<double, 1>();
          const auto ll = l.accessor<int64_t, 1>();
          for (int64_t i = 0; i < b.size(0); ++i)
            row.boxes.push_back({bb[i][0], bb[i][1], bb[i][2] - bb[i][0], bb[i][3] - bb[i][1], ss[i], ll[i] - 1});
          // A mask head's masks, in the image's own pixels as its boxes are.
          std::vector<Rle> masks = detection::detectedMasks(d.masks, row.height, row.width);
          for (size_t i = 0; i < masks.size() && i < row.boxes.size(); ++i) row.boxes[i].mask = std::move(masks[i]);
          r.boxesFound += static_cast<int64_t>(row.boxes.size());
        } else {
          ++r.skipped;
        }
        r.rows.push_back(std::move(row));
      }
      if (progress && !progress(static_cast<int64_t>(first + n), static_cast<int64_t>(files.size()))) break;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

  // COCO's figures of r's boxes against the annotations' (every annotated
  // image counts, a skipped one as finding nothing, as pycocotools counts it).
  void evaluate(PredictionReport& r, const BoxAnnotations& a) const {
    std::vector<int64_t> ids;
    for (const auto& image : a.images) ids.push_back(image.id);
    const std::vector<CocoBox> truth = cocoGroundTruth(a, /*byIndex=*/false);
    std::vector<CocoBox> found;
    std::vector<Rle> masks;  // an instance segmentation's, a detection's each
    for (const auto& row : r.rows)
      for (const auto& b : row.boxes) {
        CocoBox d;
        d.image = row.imageId;
        d.category = r.categoryIds[static_cast<size_t>(b.label)];
        d.box = {b.x, b.y, b.width, b.height};
        d.area = b.width * b.height;
        d.score = b.score;
        found.push_back(d);
        if (b.mask) masks.push_back(*b.mask);
      }
    const CocoStats stats = cocoEvaluate(ids, truth, found);
    r.evaluated = true;
    r.coco = stats.stats;
    r.truthBoxes = static_cast<int64_t>(truth.size());
    r.apPerClass = cocoPerClass(stats, r.categoryIds).ap;
    if (a.masks.empty()) return;
    const CocoStats segm = cocoEvaluateMasks(ids, truth, found, masks);
    r.maskEvaluated = true;
    r.maskCoco = segm.stats;
    r.maskApPerClass = cocoPerClass(segm, r.categoryIds).ap;
  }
};

PredictionReport BoxPredict::predict(const std::string& input, const std::string& annotations,
                                     const PredictProgress& progress) {
  std::vector<std::string> files, names;
  if (annotations.empty()) {
    files = listImageInputs(input, {}).files;
    std::error_code ec;
    const bool folder = fs::is_directory(input, ec);
    for (const auto& f : files)
      names.push_back(folder ? fs::relative(f, input, ec).generic_string() : fs::path(f).filename().string());
    return predictPhotos(files, names, {}, progress);
  }
  if (!fs::is_directory(input))
    throw InputError("--input " + input + " is not a folder: with --annotations, give the folder its images are in");
  const bool masks = config.task.kind == TaskKind::instance_segmentation;
  BoxAnnotations a = readBoxAnnotations(annotations, input, "auto", badBoxesOf(config.data.on_bad_box.value()), masks);
  // YOLO's and VOC's files have no category ids of their own (a class index,
  // a place by name): when they name the run's categories, those are the
  // run's, so the YOLO or VOC form of a COCO-trained run's set is evaluated
  // as its COCO form is (issue 60, item 9).
  if (a.format != "coco") {
    std::map<std::string, int64_t> runIds;
    for (const auto& c : categories) runIds[c.name] = c.id;
    const bool named = a.categories.size() == categories.size() &&
                       std::all_of(a.categories.begin(), a.categories.end(),
                                   [&](const BoxCategory& c) { return runIds.count(c.name) > 0; });
    if (named)
      for (auto& c : a.categories) c.id = runIds[c.name];
  }
  const auto byId = [](std::vector<BoxCategory> v) {
    std::sort(v.begin(), v.end(), [](const BoxCategory& x, const BoxCategory& y) { return x.id < y.id; });
    return v;
  };
  const std::vector<BoxCategory> fileById = byId(a.categories), runById = byId(categories);
  const bool same = fileById.size() == runById.size() && std::equal(fileById.begin(), fileById.end(), runById.begin(),
                                                                    [](const BoxCategory& x, const BoxCategory& y) {
                                                                      return x.id == y.id && x.name == y.name;
                                                                    });
  if (!same) {
    // The first few of each (5,000 mismatched categories made a message of 100 kB, issue 59, item 15).
    const auto listed = [](const std::vector<BoxCategory>& categories) {
      std::string text;
      for (size_t i = 0; i < categories.size() && i < 8; ++i)
        text += (text.empty() ? "" : ", ") + std::to_string(categories[i].id) + " " + categories[i].name.substr(0, 40);
      if (categories.size() > 8) text += ", ... " + std::to_string(categories.size() - 8) + " more";
      return text;
    };
    const std::string run = listed(categories), file = listed(a.categories);
    throw DataError(annotations + " names the categories [" + file + "], but run " + folder + " detects [" + run +
                    "]: its figures need the same categories with the same ids");
  }
  std::vector<const AnnotatedImage*> annotated;
  for (const auto& image : a.images) {
    files.push_back(image.file);
    names.push_back(fs::relative(image.file, input).generic_string());
    annotated.push_back(&image);
  }
  PredictionReport r = predictPhotos(files, names, annotated, progress);
  if (r.rows.size() == files.size()) evaluate(r, a);
  return r;
}

std::unique_ptr<Predictor::Impl> makeBoxPredict() { return std::make_unique<BoxPredict>(); }

bool isDetectionRun(const std::string& folder) {
  try {
    return boxesTask(readRunSettings(folder).task.kind);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace studio
