#pragma once
// What a run's data settings select before any pixel is decoded: the class
// names and, for each split, which examples and their labels. The engine
// loads exactly these; the window counts and previews them.
//  - idx: the train-/t10k- files; train_limit and test_limit take the first N.
//  - image_folder: the files of scanImageFolder; without a test (val) folder,
//    data.test_fraction (data.val_fraction) of each class is held out.
//  - csv: the rows of the table (data.root or data.train_file); without
//    data.test_file, data.test_fraction of each class is held out. A
//    regression or multi-label table (task.kind) has target columns or tags
//    instead of classes: its labels are all 0 (one stratum), its targets in
//    table.y (multi-label: 0 or 1 per label).
// For folders and tables the limits take N examples chosen by a seeded
// shuffle (their files and rows are often sorted by class). Validation is
// held out of the training examples, stratified. All of it is seeded by
// train.seed and the same on every machine (studio/data_split.h).
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/box_annotations.h"
#include "studio/coco_mask.h"
#include "studio/csv_table.h"
#include "studio/train_config.h"

namespace studio {

enum class DataKind { Image, Table };

struct PlannedSplit {
  std::vector<int64_t> items;   // which examples (see DataPlan for what they index)
  std::vector<int64_t> labels;  // their classes
  int64_t size() const { return static_cast<int64_t>(items.size()); }
};

struct DataPlan {
  Choice<DataFormat> format;
  DataKind kind = DataKind::Image;
  Choice<TaskKind> task = TaskKind::classification;  // task.kind
  std::vector<std::string> classNames;               // empty for a regression or multi-label
  std::vector<std::string> targetNames;              // a regression's target columns, a multi-label's labels
  PlannedSplit train, val, test;
  std::string trainFrom, valFrom, testFrom;  // where each split comes from, in words

  // idx: an item below idxTrainCount is that image of the training files,
  // the others (item - idxTrainCount) of the test files.
  std::string idxTrainImages, idxTrainLabels, idxTestImages, idxTestLabels;
  int64_t idxTrainCount = 0, idxTestCount = 0;
  int64_t idxHeight = 0, idxWidth = 0;

  // image_folder: items index files.
  std::vector<std::string> files;
  int64_t otherFiles = 0;  // files under the folder that are not images
  // data.corrections (studio/corrections.h): files left out, labels changed.
  int64_t correctionsRemoved = 0, correctionsRelabelled = 0;

  // task.kind detection: items index boxes.images (and files, their
  // paths): the training annotations' images, then the test annotations'.
  BoxAnnotations boxes;

  // task.kind segmentation: each item's mask, the PNG beside files' image;
  // or, from a COCO instances JSON (data.annotations, masksFrom), each
  // item's instances with their classes (1 ..), painted into a mask as
  // torchvision's references do (studio/plan_masks.h).
  std::vector<std::string> maskFiles;
  struct InstanceMasks {
    int64_t height = 0, width = 0, id = 0;  // the annotations' size and image id
    std::vector<std::pair<Rle, uint8_t>> instances;
  };
  std::vector<InstanceMasks> instanceMasks;
  std::string masksFrom;

  // csv: items index table rows (the training table's, then the test table's).
  NumericTable table;
  std::vector<std::string> featureNames;
  std::string trainTable, testTable;
  int64_t trainTableRows = 0, trainFirstRow = 1, testFirstRow = 1;  // spreadsheet row numbers

  int64_t classes() const { return static_cast<int64_t>(classNames.size()); }
  bool regression() const { return task == TaskKind::regression; }
  bool multilabel() const { return task == TaskKind::multilabel; }
  // Boxes per image: task.kind detection or instance_segmentation (boxes.masks).
  bool detection() const { return boxesTask(task); }
  bool instanceSegmentation() const { return task == TaskKind::instance_segmentation; }
  bool segmentation() const { return task == TaskKind::segmentation; }
  // A value per example and target (regression) or label (multi-label) in table.y.
  bool hasTargets() const { return regression() || multilabel(); }
  // The model's outputs: a logit per class or label, or a value per target.
  int64_t outputs() const { return hasTargets() ? static_cast<int64_t>(targetNames.size()) : classes(); }
};

// Throws DataError naming the file, folder, row or column that is wrong.
DataPlan planData(const TrainConfig& config);

// Where an item comes from, for people: "…/cat/001.png", "table.csv row 17",
// "…/t10k-images-idx3-ubyte.gz image 312".
std::string exampleSource(const DataPlan& plan, int64_t item);

}  // namespace studio
