#include "studio/dataset_info.h"
#include "studio/box_counts.h"
#include "studio/plan_masks.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "studio/data_split.h"
#include "studio/errors.h"
#include "studio/image_file.h"

namespace studio {

std::string InputShape::text() const {
  if (features > 0) return std::to_string(features) + " features";
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

namespace {
int64_t examplesOr(int64_t examples, const std::vector<int64_t>& counts) {
  return examples >= 0 ? examples : std::accumulate(counts.begin(), counts.end(), int64_t{0});
}
}  // namespace

int64_t DatasetDescription::trainSize() const { return examplesOr(trainExamples, trainCounts); }
int64_t DatasetDescription::valSize() const { return examplesOr(valExamples, valCounts); }
int64_t DatasetDescription::testSize() const { return examplesOr(testExamples, testCounts); }
int64_t DatasetDescription::boxes(const std::vector<int64_t>& counts) const {
  return boxesTask(task) ? std::accumulate(counts.begin(), counts.end(), int64_t{0}) : 0;
}

std::string findDataFile(const std::string& root, const std::string& stem) {
  namespace fs = std::filesystem;
  for (const std::string& name : {stem + ".gz", stem}) {
    fs::path p = fs::path(root) / name;
    if (fs::exists(p)) return p.string();
  }
  throw DataError("data file " + (fs::path(root) / (stem + ".gz")).string() +
                  " not found (nor without .gz); set data.root to the folder holding the " +
                  "MNIST-format files (Debian: apt install dataset-fashion-mnist)");
}

InputShape inputShapeOf(const DataPlan& p, const DataConfig& d, const std::string& modelKind) {
  InputShape s;
  if (p.kind == DataKind::Table) {
    s.features = static_cast<int64_t>(p.featureNames.size());
  } else if (p.format == DataFormat::idx) {
    s = {1, p.idxHeight, p.idxWidth, 0};
  } else {
    const bool autoSize = d.image_size.size() != 2 || d.image_size[0] == 0;
    if (isTorchvisionBackbone(modelKind) && autoSize && d.channels == 0) {
      // What torchvision's weights were trained on: RGB at 224x224.
      s = {3, 224, 224, 0};
      return s;
    }
    if (autoSize || d.channels == 0) {
      // The first image of the training folder, in sorted order.
      const ImageHeader first = readImageHeader(p.files.front());
      s.height = first.height;
      s.width = first.width;
      s.channels = first.channels;
    }
    if (!autoSize) {
      s.height = d.image_size[0];
      s.width = d.image_size[1];
    } else if (isTorchvisionBackbone(modelKind)) {
      s.height = s.width = 224;
    }
    if (d.channels != 0) s.channels = d.channels;
  }
  return s;
}

StoredShape storedShapeOf(const InputShape& in, const DataConfig& d, const std::string& modelKind) {
  StoredShape s{in.height, in.width, false};
  if (in.features > 0 || d.format != DataFormat::image_folder) return s;
  const int64_t shorter = std::min(in.height, in.width);
  int64_t side = d.stored_size;
  if (side == 0 && isTorchvisionBackbone(modelKind)) side = (shorter * 8 + 3) / 7;  // round(shorter * 8 / 7)
  if (side == 0) return s;
  if (side < shorter)
    throw InputError("data.stored_size " + std::to_string(side) + " is smaller than the image size's shorter side (" +
                     std::to_string(in.height) + "x" + std::to_string(in.width) + "): set it to 0 or at least " +
                     std::to_string(shorter));
  // Stored far above the input, every image costs its square in pixels for
  // crops that are then mostly thrown away (4096 for 32 px: 16,384 times the
  // input's pixels, 5.8 GB for 120 photos). torchvision's recipe stores 8/7.
  if (side > 4 * shorter)
    throw InputError("data.stored_size " + std::to_string(side) +
                     " is more than 4 times the image size's shorter "
                     "side (" +
                     std::to_string(in.height) + "x" + std::to_string(in.width) +
                     "): each image would be "
                     "stored with " +
                     std::to_string((side * side) / std::max<int64_t>(1, in.height * in.width)) +
                     " times the pixels the model sees; set it to at most " + std::to_string(4 * shorter) +
                     " (torchvision's recipe stores 8/7 of it: " + std::to_string((shorter * 8 + 3) / 7) + ")");
  auto scaled = [&](int64_t v) { return (v * side * 2 + shorter) / (2 * shorter); };  // round(v * side / shorter)
  return {scaled(in.height), scaled(in.width), true};
}

std::string storedAbovePhotos(const StoredShape& stored, const InputShape& input, const std::vector<std::string>& files,
                              size_t sample) {
  if (!stored.larger(input) || files.empty()) return "";
  const int64_t side = std::min(stored.height, stored.width);
  ImageHeader largest;
  for (size_t i = 0; i < std::min(sample, files.size()); ++i) {
    ImageHeader h;
    try {
      h = readImageHeader(files[i]);
    } catch (const std::exception&) {
      continue;  // data.on_bad_file speaks for it when it is decoded
    }
    if (std::min(h.height, h.width) >= side) return "";
    if (std::min(h.height, h.width) > std::min(largest.height, largest.width)) largest = h;
  }
  const int64_t own = std::min(largest.height, largest.width);
  if (own <= 0) return "";
  const int64_t input_side = std::min(input.height, input.width);
  return "data.stored_size " + std::to_string(side) +
         " is larger than the photos themselves (the largest of the first " +
         std::to_string(std::min(sample, files.size())) + " is " + std::to_string(largest.height) + "x" +
         std::to_string(largest.width) + "): they are enlarged to be stored, which adds no detail and takes " +
         std::to_string((side * side + own * own / 2) / (own * own)) + " times the room; set it to 0 or at most " +
         std::to_string(std::max(own, input_side));
}

std::vector<int64_t> boxesPerClass(const BoxAnnotations& a, const std::vector<int64_t>& images, int64_t classes) {
  std::vector<char> in(a.images.size(), 0);
  for (int64_t image : images) in[static_cast<size_t>(image)] = 1;
  std::vector<int64_t> counts(static_cast<size_t>(classes), 0);
  for (const auto& b : a.boxes)
    if (!b.crowd && in[static_cast<size_t>(b.image)]) ++counts[static_cast<size_t>(b.label)];
  return counts;
}

DatasetDescription describePlan(const DataPlan& p, const DataConfig& d, const std::string& modelKind) {
  DatasetDescription out;
  out.format = p.format;
  out.kind = p.kind;
  out.classNames = p.classNames;
  const int64_t strata = p.hasTargets() ? 1 : p.classes();  // a regression's or multi-label's labels are all 0
  out.trainCounts = classCounts(p.train.labels, strata);
  out.valCounts = classCounts(p.val.labels, strata);
  out.testCounts = classCounts(p.test.labels, strata);
  // The splits' examples: a detector's are images, whose boxes the counts
  // hold (the window planned 804 steps for boxes where the engine ran 288).
  out.trainExamples = p.train.size();
  out.valExamples = p.val.size();
  out.testExamples = p.test.size();
  if (p.detection()) {
    out.trainCounts = boxesPerClass(p.boxes, p.train.items, p.classes());
    out.valCounts = boxesPerClass(p.boxes, p.val.items, p.classes());
    out.testCounts = boxesPerClass(p.boxes, p.test.items, p.classes());
  }
  // A segmentation's: each class's pixels in the split's masks.
  if (p.segmentation()) {
    out.trainCounts = maskPixelsPerClass(p, p.train.items);
    out.valCounts = maskPixelsPerClass(p, p.val.items);
    out.testCounts = maskPixelsPerClass(p, p.test.items);
  }
  out.targetNames = p.targetNames;
  out.task = p.task;
  out.input = inputShapeOf(p, d, modelKind);
  out.featureNames = p.featureNames;
  out.trainFrom = p.trainFrom;
  out.valFrom = p.valFrom;
  out.testFrom = p.testFrom;
  out.otherFiles = p.otherFiles;
  out.correctionsRemoved = p.correctionsRemoved;
  out.correctionsRelabelled = p.correctionsRelabelled;
  return out;
}

DatasetDescription describeDataset(const TrainConfig& config) {
  return describePlan(planData(config), config.data, config.model.kind);
}

int64_t countTrainExamples(const TrainConfig& config) { return planData(config).train.size(); }

}  // namespace studio
