#pragma once
// Loads what a data plan selects into datasets: IDX files read whole, image
// folders decoded through the cache (studio: data/decoded_images.h), tables
// from the parsed CSV. Also the normalisation statistics of the training
// split: per channel for images (of the pixels in [0, 1]), per feature for
// tables (as scikit-learn's StandardScaler: population std, 1 when a column
// is constant).
// Thread: engine thread.

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/decoded_images.h"
#include "studio/data_plan.h"
#include "studio/dataset_info.h"
#include "studio/train_config.h"

namespace studio {

struct DataSplits {
  std::shared_ptr<ExampleSet> train, val, test;
  DataKind kind = DataKind::Image;
  InputShape input;
  // Image folders: the images as stored, from which the input is cut
  // (data.stored_size); the input's size otherwise.
  StoredShape stored;
  Choice<TaskKind> task = TaskKind::classification;  // task.kind
  std::vector<std::string> classNames;               // empty for a regression or multi-label
  std::vector<double> mean, std;                     // per channel or feature; 0 and 1 when data.normalize is off
  // A regression's targets or a multi-label's labels: their names, and the
  // training split's mean and population std a regression's targets were
  // standardised with (0 and 1 when task.standardize_targets is off, and
  // for labels).
  std::vector<std::string> targetNames;
  std::vector<double> targetMean, targetStd;
  std::vector<int64_t> labelPositives;  // multi-label: each label's training examples
  // The loss's weights, from the settings and the training split: a
  // classifier's loss.class_weights, a multi-label's loss.pos_weight (empty:
  // none; studio/class_weights.h).
  std::vector<double> lossWeights;
  std::vector<int64_t> trainCounts, valCounts, testCounts;  // per class, after skipped files
  std::vector<int64_t> trainItems, valItems, testItems;     // the plan's item at each position
  // Image folders: what decoding did.
  std::vector<std::string> skipped;  // "path: why" of the files left out
  bool fromCache = false;
  std::string cacheFile;
  double decodeSeconds = 0;
  int64_t numClasses() const { return static_cast<int64_t>(classNames.size()); }
  bool regression() const { return task == TaskKind::regression; }
  bool multilabel() const { return task == TaskKind::multilabel; }
  // The model's outputs: a logit per class or label, or a value per target.
  int64_t outputs() const {
    return regression() || multilabel() ? static_cast<int64_t>(targetNames.size()) : numClasses();
  }
};

DataSplits loadData(const TrainConfig& config, const DataPlan& plan, const LoadProgress& progress);

// Whether images are normalised with ImageNet's mean and std
// (data.normalize_stats) rather than the training split's.
bool imagenetStatistics(const TrainConfig& config);

}  // namespace studio
