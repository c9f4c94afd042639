#pragma once
// What a run's data amounts to, from the data plan and the files' headers
// (at most one image is read), so the window can plan the schedule and show
// the data before any run starts, and the CLI can print a summary. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/train_config.h"

namespace studio {

// The input each example gives the model.
struct InputShape {
  int64_t channels = 0, height = 0, width = 0;  // images
  int64_t features = 0;                         // tables
  // "1x28x28" or "4 features"
  std::string text() const;
};

struct DatasetDescription {
  Choice<DataFormat> format;
  DataKind kind = DataKind::Image;
  std::vector<std::string> classNames;
  // Per class (a regression: all in one); a detector's: its boxes per class.
  std::vector<int64_t> trainCounts, valCounts, testCounts;
  // Each split's examples, as the engine's loader gets them (a detector's:
  // images, not boxes; -1: the counts' sum). The run's plan counts these.
  int64_t trainExamples = -1, valExamples = -1, testExamples = -1;
  std::vector<std::string> targetNames;  // a regression's target columns, a multi-label's labels
  Choice<TaskKind> task = TaskKind::classification;
  InputShape input;
  std::vector<std::string> featureNames;  // tables
  std::string trainFrom, valFrom, testFrom;
  int64_t otherFiles = 0;
  int64_t correctionsRemoved = 0, correctionsRelabelled = 0;  // data.corrections
  // Examples of each split (the plan's steps come from trainSize).
  int64_t trainSize() const;
  int64_t valSize() const;
  int64_t testSize() const;
  // A detector's boxes in a split (its counts' sum); 0 for other tasks.
  int64_t boxes(const std::vector<int64_t>& counts) const;
};

// <root>/<stem>.gz, or <root>/<stem> when only the raw file is there. Throws
// DataError naming the file and the setting to change when neither exists.
std::string findDataFile(const std::string& root, const std::string& stem);

// The input shape the plan's examples will have: idx from the files' header,
// image folders from data.image_size and data.channels or the first training
// image, tables from their feature columns.
// A torchvision backbone (modelKind) without a set image size takes 224x224,
// and RGB when data.channels is 0.
InputShape inputShapeOf(const DataPlan& plan, const DataConfig& data, const std::string& modelKind = "");

// How an image folder's images are stored (decoded and cached) for an input
// shape (data.stored_size): the input's size, squashed to it; or larger,
// each image's aspect kept and the centre cropped (`cover`), the input then
// cut from it. Other data: the input's size.
struct StoredShape {
  int64_t height = 0, width = 0;
  bool cover = false;
  bool larger(const InputShape& in) const { return height != in.height || width != in.width; }
};
// Throws InputError naming data.stored_size when it is below the input's.
StoredShape storedShapeOf(const InputShape& input, const DataConfig& data, const std::string& modelKind = "");
// A warning naming data.stored_size when the photos themselves (the first
// `sample` of `files`) are all smaller than the stored shape's shorter side:
// they are enlarged to be stored, which adds no detail and costs room. Empty
// when the stored shape is the input's, or some photo is large enough.
std::string storedAbovePhotos(const StoredShape& stored, const InputShape& input, const std::vector<std::string>& files,
                              size_t sample = 16);

// Throws DataError naming what is wrong.
DatasetDescription describeDataset(const TrainConfig& config);
DatasetDescription describePlan(const DataPlan& plan, const DataConfig& data, const std::string& modelKind = "");

// Training examples a run with these settings trains on (what the engine's
// loader gets).
int64_t countTrainExamples(const TrainConfig& config);

}  // namespace studio
