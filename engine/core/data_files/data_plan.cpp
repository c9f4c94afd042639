#include "studio/data_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "labels_plan.h"
#include "plan_splits.h"
#include "segmentation_plan.h"
#include "studio/box_checks.h"
#include "studio/corrections.h"
#include "studio/data_split.h"
#include "studio/dataset_info.h"
#include "studio/idx_file.h"
#include "studio/image_folder.h"
#include "studio/log.h"
#include "studio/machine_memory.h"
#include "studio/path_within.h"
#include "studio/yolo_splits.h"

namespace studio {
namespace {

using namespace plan_split;

const std::vector<std::string>& fashionMnistClasses() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

void planIdx(DataPlan& p, const DataConfig& d, uint64_t seed) {
  // One statement each: the first missing file is the one reported.
  p.idxTrainImages = findDataFile(d.root, "train-images-idx3-ubyte");
  p.idxTrainLabels = findDataFile(d.root, "train-labels-idx1-ubyte");
  p.idxTestImages = findDataFile(d.root, "t10k-images-idx3-ubyte");
  p.idxTestLabels = findDataFile(d.root, "t10k-labels-idx1-ubyte");
  // In the order of the files above: the first bad one is the one reported.
  const std::vector<int64_t> trainDims = readIdxDims(p.idxTrainImages, 3);
  const IdxArray trainLabels = readIdxFile(p.idxTrainLabels, 1);
  const std::vector<int64_t> testDims = readIdxDims(p.idxTestImages, 3);
  const IdxArray testLabels = readIdxFile(p.idxTestLabels, 1);
  auto agree = [](const std::string& images, int64_t n, const std::string& labels, int64_t m) {
    if (n != m)
      throw DataError("data files disagree: " + images + " holds " + std::to_string(n) + " images but " + labels +
                      " holds " + std::to_string(m) + " labels");
  };
  agree(p.idxTrainImages, trainDims[0], p.idxTrainLabels, trainLabels.dims[0]);
  agree(p.idxTestImages, testDims[0], p.idxTestLabels, testLabels.dims[0]);
  if (testDims[1] != trainDims[1] || testDims[2] != trainDims[2])
    throw DataError("data files disagree: the test images in " + p.idxTestImages + " are " +
                    std::to_string(testDims[1]) + "x" + std::to_string(testDims[2]) + " but the training images in " +
                    p.idxTrainImages + " are " + std::to_string(trainDims[1]) + "x" + std::to_string(trainDims[2]));
  p.idxHeight = trainDims[1];
  p.idxWidth = trainDims[2];
  p.idxTrainCount = trainDims[0];
  p.idxTestCount = testDims[0];
  for (const auto* labels : {&trainLabels, &testLabels})
    for (uint8_t l : labels->data)
      if (l > 9)
        throw DataError("labels file " + (labels == &trainLabels ? p.idxTrainLabels : p.idxTestLabels) +
                        " holds label " + std::to_string(l) + " (expected 0..9)");
  if (d.dataset == IdxDataset::fashion_mnist) {
    p.classNames = fashionMnistClasses();
  } else {
    for (int k = 0; k < 10; ++k) p.classNames.push_back(std::to_string(k));
  }
  for (size_t i = 0; i < trainLabels.data.size(); ++i) append(p.train, static_cast<int64_t>(i), trainLabels.data[i]);
  for (size_t i = 0; i < testLabels.data.size(); ++i)
    append(p.test, p.idxTrainCount + static_cast<int64_t>(i), testLabels.data[i]);
  // The files are in no order of class: the first N are a fair sample.
  limit(p.train, d.train_limit, false, 0);
  limit(p.test, d.test_limit, false, 0);
  p.trainFrom = p.idxTrainImages;
  p.testFrom = p.idxTestImages;
  p.val = holdOut(p.train, d.val_fraction, mixSeed(seed, kValStream), p.classes());
}

void planFolder(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const ImageFolderScan scan = scanImageFolder(d.root);
  p.classNames = scan.classNames;
  p.otherFiles = scan.otherFiles;
  auto add = [&](const ImageFolderSplit& from, PlannedSplit& to) {
    for (size_t i = 0; i < from.files.size(); ++i) {
      append(to, static_cast<int64_t>(p.files.size()), from.labels[i]);
      p.files.push_back(from.files[i]);
    }
  };
  add(scan.train, p.train);
  const std::string trainDir = scan.splitFolders ? d.root + "/train" : d.root;
  p.trainFrom = trainDir;
  if (!scan.test.files.empty()) {
    add(scan.test, p.test);
    p.testFrom = d.root + "/test";
  } else if (d.test_fraction > 0) {
    p.test = holdOut(p.train, d.test_fraction, mixSeed(seed, kTestStream), p.classes());
    p.testFrom = "held out of " + trainDir + ": " + percent(d.test_fraction) + " of each class";
  } else {
    throw DataError("data.root " + d.root +
                    " has no test/ folder and data.test_fraction is 0, so nothing is left "
                    "to test on: set data.test_fraction (e.g. 0.2) or add a test folder");
  }
  limit(p.train, d.train_limit, true, mixSeed(seed, kLimitStream));
  limit(p.test, d.test_limit, true, mixSeed(seed, kLimitStream + 1));
  if (!scan.val.files.empty()) {
    add(scan.val, p.val);
    p.valFrom = d.root + "/val";
  } else {
    p.val = holdOut(p.train, d.val_fraction, mixSeed(seed, kValStream), p.classes());
  }
}

// task.kind detection: every annotated image (those without boxes too, as
// negatives), one stratum; the test annotations' images after them (under
// data.test_root), else data.test_fraction of the images held out.
void planDetection(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const BadBoxes bad = badBoxesOf(d.on_bad_box.value());
  p.boxes = readBoxAnnotations(d.annotations, d.root, d.annotation_format.name(), bad, p.instanceSegmentation());
  for (const auto& c : p.boxes.categories) p.classNames.push_back(c.name);
  // A YOLO data.yaml's own train:, val: and test: (issue 59, item 5).
  const YoloSplits ys = p.boxes.format == "yolo" ? yoloSplitsOf(d.annotations, d.root, p.boxes) : YoloSplits{};
  std::array<PlannedSplit, 4> given;  // by YoloSplit
  for (size_t i = 0; i < p.boxes.images.size(); ++i) {
    append(given[static_cast<size_t>(ys.declared() ? ys.of[i] : YoloSplit::train)],
           static_cast<int64_t>(p.files.size()), 0);
    p.files.push_back(p.boxes.images[i].file);
  }
  p.train = std::move(given[1]);
  p.trainFrom = ys.declared() ? d.annotations + "'s train: " + ys.train : d.annotations;
  if (!given[0].items.empty())
    log::info(std::to_string(given[0].size()) + " images under data.root " + d.root + " are in none of " +
              d.annotations + "'s splits and are not used");
  if (!ys.test.empty()) {
    if (!d.test_annotations.empty())
      throw DataError(d.annotations + " gives its test: images and data.test_annotations names " + d.test_annotations +
                      ": keep one test set");
    p.test = std::move(given[3]);
    p.testFrom = d.annotations + "'s test: " + ys.test + " (data.test_fraction is not used)";
  } else if (!d.test_annotations.empty()) {
    const std::string root = d.test_root.empty() ? d.root : d.test_root;
    BoxAnnotations test =
        readBoxAnnotations(d.test_annotations, root, d.annotation_format.name(), bad, p.instanceSegmentation());
    if (test.categories.size() != p.boxes.categories.size() ||
        !std::equal(test.categories.begin(), test.categories.end(), p.boxes.categories.begin(),
                    [](const BoxCategory& a, const BoxCategory& b) { return a.id == b.id && a.name == b.name; }))
      throw DataError(d.test_annotations + ": its categories differ from " + d.annotations +
                      "'s; a test set must name the same categories with the same ids");
    const auto first = static_cast<int64_t>(p.boxes.images.size());
    for (auto box : test.boxes) {
      box.image += first;
      p.boxes.boxes.push_back(box);
    }
    p.boxes.masks.insert(p.boxes.masks.end(), test.masks.begin(), test.masks.end());
    for (const auto& image : test.images) {
      append(p.test, static_cast<int64_t>(p.files.size()), 0);
      p.files.push_back(image.file);
      p.boxes.images.push_back(image);
    }
    p.boxes.clipped += test.clipped;
    p.boxes.skipped += test.skipped;
    p.testFrom = d.test_annotations;
  } else if (d.test_fraction > 0) {
    p.test = holdOut(p.train, d.test_fraction, mixSeed(seed, kTestStream), 1);
    p.testFrom = "held out of " + d.annotations + ": " + percent(d.test_fraction) + " of the images";
  } else {
    throw DataError(d.annotations +
                    ": data.test_fraction is 0 and there are no data.test_annotations, so nothing is left to test "
                    "on: set data.test_fraction (e.g. 0.2) or name a test set");
  }
  limit(p.train, d.train_limit, true, mixSeed(seed, kLimitStream));
  limit(p.test, d.test_limit, true, mixSeed(seed, kLimitStream + 1));
  const std::string note = ys.note.empty() ? "" : " (" + ys.note + ")";
  if (!ys.val.empty()) {
    p.val = std::move(given[2]);
    p.valFrom = d.annotations + "'s val: " + ys.val + " (data.val_fraction is not used)";
  } else {
    p.val = holdOut(p.train, d.val_fraction, mixSeed(seed, kValStream), 1);
    if (d.val_fraction > 0)
      p.valFrom = "held out of the training images: " + percent(d.val_fraction) + " of them" + note;
  }
  if (ys.test.empty() && d.test_annotations.empty()) p.testFrom += note;
}

// A table's splits once its rows (and a test table's) are read: the test
// rows held out unless data.test_file gave them (stratified by class; a
// regression's rows are one stratum), the limits, the validation rows.
void splitTable(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const int64_t strata = p.hasTargets() ? 1 : p.classes();
  if (d.test_file.empty() || p.kind == DataKind::Image) {
    if (d.test_fraction <= 0)
      throw DataError(
          "there is no data.test_file and data.test_fraction is 0, so nothing is left to test on: set "
          "data.test_fraction (e.g. 0.2)" +
          std::string(p.kind == DataKind::Table ? " or data.test_file" : ""));
    p.test = holdOut(p.train, d.test_fraction, mixSeed(seed, kTestStream), strata);
    p.testFrom = "held out of " + p.trainFrom + ": " + percent(d.test_fraction) +
                 (p.hasTargets() ? " of the rows" : " of each class");
  }
  limit(p.train, d.train_limit, true, mixSeed(seed, kLimitStream));
  limit(p.test, d.test_limit, true, mixSeed(seed, kLimitStream + 1));
  p.val = holdOut(p.train, d.val_fraction, mixSeed(seed, kValStream), strata);
  if (p.hasTargets() && !p.val.items.empty()) p.valFrom = "held out of the training rows: " + percent(d.val_fraction);
}

std::vector<std::string> splitTags(const std::string& cell, const std::string& separator) {
  std::vector<std::string> tags;
  size_t start = 0;
  while (start <= cell.size()) {
    const size_t end = std::min(cell.find(separator, start), cell.size());
    if (std::string tag = trimCell(cell.substr(start, end - start)); !tag.empty()) tags.push_back(std::move(tag));
    start = end + separator.size();
  }
  return tags;
}

// A multi-label table's labels from its tag column: the tags of every row
// as 0/1 columns (names: the training table's tags, sorted). `names` empty:
// they are found here; else a tag outside them is an error (a test table's).
void tagTargets(NumericTable& t, const CsvTable& table, const TableColumns& cols, const DataConfig& d,
                std::vector<std::string>& names, const std::string& trainTable) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& text : t.labelText) rows.push_back(splitTags(text, d.tag_separator));
  if (names.empty()) {
    std::vector<std::string> all;
    for (const auto& r : rows) all.insert(all.end(), r.begin(), r.end());
    names = classNamesOf(all);
  }
  std::map<std::string, size_t> index;
  for (size_t k = 0; k < names.size(); ++k) index[names[k]] = k;
  t.targets = static_cast<int64_t>(names.size());
  t.y.assign(rows.size() * names.size(), 0.0f);
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string where = "table " + table.path + " row " +
                              std::to_string(static_cast<int64_t>(r) + table.firstRowNumber) + ", column \"" +
                              table.columns[static_cast<size_t>(cols.label)] + "\"";
    if (rows[r].empty())
      throw DataError(where + ": \"" + t.labelText[r] + "\" has no tag (tags are separated by data.tag_separator \"" +
                      d.tag_separator + "\")");
    for (const auto& tag : rows[r]) {
      const auto it = index.find(tag);
      if (it == index.end())
        throw DataError(where + " has tag \"" + tag + "\", which the training table " + trainTable +
                        " does not have (a model can only predict the tags it was trained on)");
      t.y[r * names.size() + it->second] = 1.0f;
    }
  }
  t.labelText.clear();
}

// A multi-label table's 0/1 columns: every cell 0 or 1, every label present.
void checkLabelColumns(const NumericTable& t, const CsvTable& table, const TableColumns& cols, bool training) {
  const auto labels = static_cast<size_t>(t.targets);
  for (size_t k = 0; k < labels; ++k) {
    bool seen = false;
    for (size_t r = 0; r < static_cast<size_t>(t.rows); ++r) {
      const float v = t.y[r * labels + k];
      if (v != 0.0f && v != 1.0f)
        throw DataError("table " + table.path + " row " +
                        std::to_string(static_cast<int64_t>(r) + table.firstRowNumber) + ", column \"" +
                        cols.targetNames[k] + "\": " + trimCell(table.rows[r][static_cast<size_t>(cols.targets[k])]) +
                        " is not 0 or 1 (a multi-label column says whether the row has that label)");
      seen = seen || v == 1.0f;
    }
    if (training && !seen)
      throw DataError("table " + table.path + " column \"" + cols.targetNames[k] +
                      "\" is 0 in every row: a label the training rows never have cannot be learned (leave it out "
                      "of data.target_columns)");
  }
}

// A regression's or a multi-label table's targets: the target columns'
// numbers (multi-label: 0/1 columns, or the label column's tags); one
// stratum (label 0) for the seeded splits.
void planCsvTargets(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const bool tags = p.multilabel() && d.target_columns.empty();
  auto columnsOf = [&](const CsvTable& table) {
    return tags ? selectColumns(table, d.label_column, d.ignore_columns)
                : selectColumns(table, d.label_column, d.ignore_columns, &d.target_columns);
  };
  auto targetsOf = [&](const CsvTable& table, const TableColumns& cols, bool training) {
    NumericTable t = numericTable(table, cols);
    if (tags)
      tagTargets(t, table, cols, d, p.targetNames, p.trainTable);
    else if (p.multilabel())
      checkLabelColumns(t, table, cols, training);
    return t;
  };
  const CsvTable train = readCsvTable(p.trainTable);
  const TableColumns cols = columnsOf(train);
  p.featureNames = cols.featureNames;
  if (!tags) p.targetNames = cols.targetNames;
  p.table = targetsOf(train, cols, true);
  p.trainTableRows = p.table.rows;
  p.trainFirstRow = train.firstRowNumber;
  const auto targets = static_cast<size_t>(p.table.targets);
  for (size_t k = 0; k < targets && p.regression(); ++k) {
    bool varies = false;
    for (size_t r = 1; r < static_cast<size_t>(p.table.rows) && !varies; ++r)
      varies = p.table.y[r * targets + k] != p.table.y[k];
    if (!varies)
      throw DataError(
          "table " + p.trainTable + " column \"" + p.targetNames[k] + "\" has the same value in every row" +
          (p.table.rows > 0 ? " (" + trimCell(train.rows[0][static_cast<size_t>(cols.targets[k])]) + ")" : "") +
          "; a regression target must vary (is data.target_columns the right column?)");
  }
  for (int64_t r = 0; r < p.table.rows; ++r) append(p.train, r, 0);
  p.trainFrom = p.trainTable;
  if (!d.test_file.empty()) {
    p.testTable = d.test_file;
    const CsvTable test = readCsvTable(d.test_file);
    const TableColumns testCols = columnsOf(test);
    if (testCols.features.size() != cols.features.size() ||
        (train.hasHeader && test.hasHeader &&
         (testCols.featureNames != cols.featureNames || testCols.targetNames != cols.targetNames)))
      throw DataError("tables disagree: " + d.test_file + " has other feature or target columns than " + p.trainTable);
    const NumericTable t = targetsOf(test, testCols, false);
    p.testFirstRow = test.firstRowNumber;
    for (int64_t r = 0; r < t.rows; ++r) append(p.test, p.table.rows + r, 0);
    p.table.x.insert(p.table.x.end(), t.x.begin(), t.x.end());
    p.table.y.insert(p.table.y.end(), t.y.begin(), t.y.end());
    p.table.rows += t.rows;
    p.testFrom = d.test_file;
  }
  splitTable(p, d, seed);
}

// An image folder's regression or multi-label targets, from data.targets_file:
// its first column names each image under data.root, the others hold its
// values, 0/1 labels or tags (as a table's target columns).
void planFolderTargets(DataPlan& p, const DataConfig& d, uint64_t seed) {
  namespace fs = std::filesystem;
  CsvTable t = readCsvTable(d.targets_file);
  if (t.rows.size() <= (t.hasHeader ? 0u : 1u))  // its header alone: said as such, not "y is not a number"
    throw DataError(
        "data.targets_file " + d.targets_file +
        " has no rows of targets under its header: give one row per image (its file name, then its values)");
  if (!t.hasHeader && t.rows.size() > 1) {  // its first row names the columns (all text when they hold tags)
    t.columns.clear();
    for (const auto& name : t.rows.front()) t.columns.push_back(trimCell(name));
    t.rows.erase(t.rows.begin());
    t.hasHeader = true;
    t.firstRowNumber = 2;
  }
  const bool tags = p.multilabel() && d.target_columns.empty();
  TableColumns cols;
  std::vector<std::string> targets = d.target_columns;
  if (p.regression() && targets.empty())
    for (size_t j = 1; j < t.columns.size(); ++j) targets.push_back(std::to_string(j));
  if (tags) {
    cols = selectColumns(t, d.label_column, {});  // the file column stands in for the features it wants left
  } else {
    cols = selectColumns(t, "", {}, &targets);  // the file column stands in for the features it wants left
    if (std::find(cols.targets.begin(), cols.targets.end(), 0) != cols.targets.end())
      throw DataError("data.target_columns names column \"" + t.columns[0] + "\" of " + d.targets_file +
                      ", which names the images (the first column)");
  }
  cols.features.clear();
  cols.featureNames.clear();
  NumericTable table = numericTable(t, cols);
  if (tags)
    tagTargets(table, t, cols, d, p.targetNames, d.targets_file);
  else {
    p.targetNames = cols.targetNames;
    if (p.multilabel()) checkLabelColumns(table, t, cols, true);
  }
  // Every row names an image under data.root (a relative name, or an
  // absolute one, resolved through links and "..": outside the folder is
  // refused alike), each image once.
  std::error_code ec;
  const fs::path root = resolvedPath(d.root);
  std::map<std::string, int64_t> rowOf;  // resolved image -> its row
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const RowImage image = rowImage(trimCell(t.rows[r][0]), static_cast<int64_t>(r) + t.firstRowNumber, d, root, rowOf,
                                    "one row of targets");
    append(p.train, static_cast<int64_t>(p.files.size()), 0);
    p.files.push_back(image.given.string());  // as named (rowImage resolved it)
  }
  // Images under data.root without a row of targets are not used: said, by name.
  int64_t other = 0;
  std::vector<std::string> unlisted;
  for (const auto& image : imageFilesUnder(d.root, other))
    if (!rowOf.count(resolvedPath(image).string())) unlisted.push_back(image);
  if (!unlisted.empty()) {
    std::string names;
    for (size_t i = 0; i < std::min<size_t>(3, unlisted.size()); ++i)
      names += (i ? ", " : "") + fs::relative(unlisted[i], d.root, ec).string();
    log::warn(std::to_string(unlisted.size()) + " of the " + std::to_string(unlisted.size() + rowOf.size()) +
              " images under data.root " + d.root + " have no row in data.targets_file " + d.targets_file +
              " and are not used (" + names + (unlisted.size() > 3 ? ", …" : "") + ")");
  }
  p.table = std::move(table);
  p.trainFrom = d.targets_file;
  splitTable(p, d, seed);
}

void planCsv(DataPlan& p, const DataConfig& d, uint64_t seed) {
  p.kind = DataKind::Table;
  p.trainTable = d.train_file.empty() ? d.root : d.train_file;
  if (p.task != TaskKind::classification) return planCsvTargets(p, d, seed);
  const CsvTable train = readCsvTable(p.trainTable);
  const TableColumns cols = selectColumns(train, d.label_column, d.ignore_columns);
  p.featureNames = cols.featureNames;
  p.table = numericTable(train, cols);
  p.trainTableRows = p.table.rows;
  p.trainFirstRow = train.firstRowNumber;
  p.classNames = classNamesOf(p.table.labelText);
  if (p.classNames.size() < 2)
    throw DataError("table " + p.trainTable + " has 1 class (\"" + p.classNames.front() + "\") in its label column \"" +
                    train.columns[static_cast<size_t>(cols.label)] +
                    "\"; a classifier needs at least 2 (is data.label_column the right column?)");
  std::map<std::string, int64_t> classOf;
  for (size_t k = 0; k < p.classNames.size(); ++k) classOf[p.classNames[k]] = static_cast<int64_t>(k);
  for (int64_t r = 0; r < p.table.rows; ++r) append(p.train, r, classOf.at(p.table.labelText[static_cast<size_t>(r)]));
  p.trainFrom = p.trainTable;
  if (!d.test_file.empty()) {
    p.testTable = d.test_file;
    const CsvTable test = readCsvTable(d.test_file);
    const TableColumns testCols = selectColumns(test, d.label_column, d.ignore_columns);
    if (testCols.features.size() != cols.features.size() ||
        (train.hasHeader && test.hasHeader && testCols.featureNames != cols.featureNames))
      throw DataError("tables disagree: " + d.test_file + " has other feature columns than " + p.trainTable);
    const NumericTable t = numericTable(test, testCols);
    p.testFirstRow = test.firstRowNumber;
    for (int64_t r = 0; r < t.rows; ++r) {
      const std::string& label = t.labelText[static_cast<size_t>(r)];
      const auto it = classOf.find(label);
      if (it == classOf.end())
        throw DataError("table " + d.test_file + " row " + std::to_string(r + test.firstRowNumber) + " has label \"" +
                        label + "\", which the training table " + p.trainTable + " does not have");
      append(p.test, p.table.rows + r, it->second);
    }
    p.table.x.insert(p.table.x.end(), t.x.begin(), t.x.end());
    p.table.labelText.insert(p.table.labelText.end(), t.labelText.begin(), t.labelText.end());
    p.table.rows += t.rows;
    p.testFrom = d.test_file;
  }
  splitTable(p, d, seed);
}

// Cross-validation: fold data.cv_fold of the training examples becomes the
// test split, the others stay; the planned test split is set aside.
void testOnFold(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const int64_t strata = p.hasTargets() ? 1 : std::max<int64_t>(p.classes(), 1);
  const std::vector<int64_t> fold = stratifiedFolds(p.train.labels, strata, d.cv_folds, mixSeed(seed, kFoldStream));
  PlannedSplit kept, held;
  for (size_t i = 0; i < fold.size(); ++i)
    append(fold[i] == d.cv_fold - 1 ? held : kept, p.train.items[i], p.train.labels[i]);
  p.train = std::move(kept);
  p.test = std::move(held);
  p.testFrom = "fold " + std::to_string(d.cv_fold) + " of " + std::to_string(d.cv_folds) + " of " + p.trainFrom +
               " (cross-validation; the test split is not used)";
  p.trainFrom += " less fold " + std::to_string(d.cv_fold);
}

}  // namespace

std::string exampleSource(const DataPlan& p, int64_t item) {
  if (p.format == DataFormat::idx)
    return item < p.idxTrainCount ? p.idxTrainImages + " image " + std::to_string(item)
                                  : p.idxTestImages + " image " + std::to_string(item - p.idxTrainCount);
  if (p.format == DataFormat::image_folder) return p.files.at(static_cast<size_t>(item));
  return item < p.trainTableRows ? p.trainTable + " row " + std::to_string(item + p.trainFirstRow)
                                 : p.testTable + " row " + std::to_string(item - p.trainTableRows + p.testFirstRow);
}

// An evaluation keeps a confusion matrix of classes x classes counts and each
// evaluated example's probabilities (examples x classes): a label column of
// ids (100,000 distinct values) would ask for more memory than the machine
// has, and fail after an epoch with a bare bad_alloc. Refused before training.
void checkClassesFit(const DataPlan& p, const DataConfig& d) {
  const auto classes = static_cast<double>(p.classes());
  if (classes < 2) return;
  const auto examples = static_cast<double>(std::max(p.test.size(), p.val.size()));
  const double need = classes * classes * 8 + examples * classes * 4;
  const double memory = physicalMemoryBytes();
  if (memory <= 0 || need <= memory / 2) return;
  char text[400], probabilities[120] = "";
  if (examples > 0)
    std::snprintf(probabilities, sizeof probabilities, " and %.0f x %.0f probabilities", examples, classes);
  std::snprintf(text, sizeof text,
                "%.0f classes: an evaluation of them needs about %.1f GB (a confusion matrix of %.0f x %.0f counts%s), "
                "more than half of this machine's %.1f GB",
                classes, need / 1e9, classes, classes, probabilities, memory / 1e9);
  throw DataError(std::string(text) +
                  (d.format == DataFormat::csv
                       ? "; is data.label_column the column of classes? An id or a measurement is "
                         "not a class: choose the label column, or task.kind regression for a number "
                         "to predict"
                       : "; give a folder with fewer classes"));
}

// A detector learns from boxes: a training split without one trained to a
// test mAP of -1 and exit 0 (a YOLO set without its labels/ folder, COCO's
// "annotations": [], every box a crowd). Issue 59, item 3.
void checkTrainingBoxes(const DataPlan& p, const DataConfig& d) {
  std::vector<char> training(p.boxes.images.size(), 0);
  for (int64_t item : p.train.items) training[static_cast<size_t>(item)] = 1;
  int64_t boxes = 0, crowds = 0;
  for (const auto& b : p.boxes.boxes)
    if (training[static_cast<size_t>(b.image)]) ++(b.crowd ? crowds : boxes);
  if (boxes > 0) return;
  const std::string why =
      crowds > 0 ? "its " + std::to_string(crowds) + " boxes are all crowds (iscrowd 1), which training leaves out"
      : p.boxes.format == "yolo"
          ? "no image has a label file (labels/NAME.txt beside images/, or NAME.txt beside the image)"
          : "the file gives no box for them";
  throw DataError("data.annotations " + d.annotations + ": the " + std::to_string(p.train.size()) +
                  " training images have no box to learn from: " + why +
                  "; a detector trains on boxes: give annotations with boxes");
}

// Images without a box are kept as negatives; a split that is mostly them
// is said, with its counts (issue 59, item 3: not a word, however many).
void warnImagesWithoutBoxes(const DataPlan& p, const DataConfig& d) {
  std::vector<char> boxed(p.boxes.images.size(), 0);
  for (const auto& b : p.boxes.boxes)
    if (!b.crowd) boxed[static_cast<size_t>(b.image)] = 1;
  for (const auto& [name, split] :
       {std::pair<const char*, const PlannedSplit*>{"training", &p.train}, {"validation", &p.val}, {"test", &p.test}}) {
    if (split->items.empty()) continue;
    int64_t without = 0;
    for (int64_t item : split->items) without += boxed[static_cast<size_t>(item)] ? 0 : 1;
    const double share = static_cast<double>(without) / static_cast<double>(split->items.size());
    if (share > d.warn_images_without_boxes)
      log::warn("data.annotations " + d.annotations + ": " + std::to_string(without) + " of the " +
                std::to_string(split->items.size()) + " " + name + " images (" + percent(share) +
                ") have no box, more than data.warn_images_without_boxes (" + percent(d.warn_images_without_boxes) +
                "); they train as negatives: check that their boxes were not lost");
  }
}

namespace {
DataPlan planOrThrow(const TrainConfig& c) {
  const DataConfig& d = c.data;
  DataPlan p;
  p.format = d.format;
  p.task = c.task.kind;
  if (p.detection() && d.format == DataFormat::image_folder)
    planDetection(p, d, c.train.seed);
  else if (p.segmentation() && d.format == DataFormat::image_folder)
    planSegmentation(p, d, c.train.seed);
  else if (d.format == DataFormat::idx)
    planIdx(p, d, c.train.seed);
  else if (d.format == DataFormat::image_folder && p.hasTargets())
    planFolderTargets(p, d, c.train.seed);
  else if (d.format == DataFormat::image_folder && !d.targets_file.empty())
    planFolderLabels(p, d, c.train.seed);  // a labels file (the Label tab's)
  else if (d.format == DataFormat::image_folder)
    planFolder(p, d, c.train.seed);
  else if (d.format == DataFormat::csv)
    planCsv(p, d, c.train.seed);
  else
    throw DataError("data.format must be idx, image_folder or csv (got \"" + d.format + "\")");
  applyCorrections(p, d);
  if (d.cv_folds > 0) testOnFold(p, d, c.train.seed);
  checkClassesFit(p, d);  // before the splits' own checks: 100,000 ids as classes leave no test examples either
  if (!p.val.items.empty() && p.valFrom.empty())
    p.valFrom = "held out of the training examples: " + percent(d.val_fraction) + " of each class";
  if (p.detection() && p.classes() < 1) throw DataError(d.annotations + " names no categories: nothing to detect");
  if (p.train.items.empty())
    throw DataError("no training examples are left from " + p.trainFrom +
                    " after the test, validation and limit settings (data.test_fraction, data.val_fraction, "
                    "data.train_limit)");
  if (p.test.items.empty()) throw DataError("no test examples are left in " + p.testFrom);
  if (p.detection()) {
    checkTrainingBoxes(p, d);
    warnImagesWithoutBoxes(p, d);
  }
  return p;
}
}  // namespace

// A folder the data names that cannot be walked (a link that leads to
// itself, no permission) is the person's input, said with its path, not
// the library's "filesystem error: recursive directory iterator ..." and
// exit 1 (issue 59, item 15).
DataPlan planData(const TrainConfig& c) {
  try {
    return planOrThrow(c);
  } catch (const std::filesystem::filesystem_error& e) {
    const std::string path = e.path1().empty() ? c.data.root : e.path1().string();
    const bool loop = e.code() == std::errc::too_many_symbolic_link_levels;
    throw DataError(path + " cannot be read: " + e.code().message() +
                    (loop ? " (a link that leads back to itself): point data.root at the folder itself"
                          : ": check the data settings' folders"));
  }
}

BadBoxes badBoxesOf(OnBadBox setting) {
  switch (setting) {
    case OnBadBox::clip:
      return BadBoxes::clip;
    case OnBadBox::skip:
      return BadBoxes::skip;
    case OnBadBox::fail:
      break;
  }
  return BadBoxes::fail;
}

}  // namespace studio
