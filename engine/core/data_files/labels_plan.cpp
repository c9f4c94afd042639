#include "data_files/labels_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "data_files/plan_splits.h"
#include "studio/csv_table.h"
#include "studio/data_split.h"
#include "studio/errors.h"
#include "studio/image_folder.h"
#include "studio/log.h"
#include "studio/path_within.h"

namespace studio {
using namespace plan_split;

bool testByName(const std::string& name, double fraction, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the name, then splitmix64 with the seed
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
  const uint64_t mixed = mixSeed(h, mixSeed(seed, kTestStream));
  return static_cast<double>(mixed >> 11) * 0x1.0p-53 < fraction;
}

RowImage rowImage(const std::string& name, int64_t row, const DataConfig& d, const std::filesystem::path& root,
                  std::map<std::string, int64_t>& rowOf, const char* once) {
  namespace fs = std::filesystem;
  const std::string where = d.targets_file + " row " + std::to_string(row) + ": image \"" + name + "\" ";
  RowImage image;
  image.given = fs::path(name).is_absolute() ? fs::path(name) : fs::path(d.root) / name;
  image.resolved = resolvedPath(image.given);
  std::error_code ec;
  if (name.empty() || !isWithin(image.resolved, root) || !fs::is_regular_file(image.resolved, ec))
    throw DataError(where + "is not a file under data.root " + d.root);
  if (const auto [at, fresh] = rowOf.emplace(image.resolved.string(), row); !fresh)
    throw DataError(where + "is named twice, in row " + std::to_string(at->second) + " and row " + std::to_string(row) +
                    ": give each image " + once);
  return image;
}

namespace {

size_t labelColumnOf(const CsvTable& t, const DataConfig& d) {
  const std::string& want = d.label_column;
  if (want.empty()) {
    const auto named = std::find(t.columns.begin(), t.columns.end(), "label");
    return named != t.columns.end() ? static_cast<size_t>(named - t.columns.begin()) : 1;
  }
  const auto named = std::find(t.columns.begin(), t.columns.end(), want);
  if (named != t.columns.end()) return static_cast<size_t>(named - t.columns.begin());
  if (!want.empty() && std::all_of(want.begin(), want.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      std::stoul(want) < t.columns.size())
    return std::stoul(want);
  throw DataError("data.label_column \"" + want + "\" is not a column of data.targets_file " + d.targets_file);
}

}  // namespace

void planFolderLabels(DataPlan& p, const DataConfig& d, uint64_t seed) {
  namespace fs = std::filesystem;
  const CsvTable t = readCsvTable(d.targets_file, CsvHeader::first_row);
  const size_t labelColumn = labelColumnOf(t, d);
  if (labelColumn == 0)
    throw DataError("data.label_column names the first column of data.targets_file " + d.targets_file +
                    ", which names the images: name the column of their classes");
  std::error_code ec;
  const fs::path root = resolvedPath(d.root);
  std::map<std::string, int64_t> rowOf;                    // resolved image -> its row
  std::vector<std::pair<RowImage, std::string>> labelled;  // (the image, its class)
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string label = trimCell(t.rows[r][labelColumn]);
    const RowImage image =
        rowImage(trimCell(t.rows[r][0]), static_cast<int64_t>(r) + t.firstRowNumber, d, root, rowOf, "one label");
    if (!label.empty()) labelled.emplace_back(image, label);
  }
  std::set<std::string> classes;
  for (const auto& [name, label] : labelled) classes.insert(label);
  if (classes.size() < 2)
    throw DataError("data.targets_file " + d.targets_file + " labels " + std::to_string(labelled.size()) +
                    " images with " + std::to_string(classes.size()) +
                    " class(es); a classifier needs images of at least 2 classes");
  p.classNames.assign(classes.begin(), classes.end());
  std::map<std::string, int64_t> classOf;
  for (size_t k = 0; k < p.classNames.size(); ++k) classOf[p.classNames[k]] = static_cast<int64_t>(k);
  if (d.test_fraction <= 0)
    throw DataError("data.test_fraction is 0, so nothing is left to test on: set data.test_fraction (e.g. 0.2)");
  for (const auto& [image, label] : labelled) {
    const std::string relative = fs::relative(image.resolved, root, ec).generic_string();
    append(testByName(relative, d.test_fraction, seed) ? p.test : p.train, static_cast<int64_t>(p.files.size()),
           classOf.at(label));
    p.files.push_back(image.given.string());
  }
  int64_t other = 0;
  const std::vector<std::string> images = imageFilesUnder(d.root, other);
  const int64_t unlabelled = static_cast<int64_t>(images.size()) - static_cast<int64_t>(labelled.size());
  if (unlabelled > 0)
    log::info(std::to_string(unlabelled) + " of the " + std::to_string(images.size()) + " images under data.root " +
              d.root + " have no label in data.targets_file " + d.targets_file + " yet and are not used");
  p.trainFrom = d.targets_file;
  p.testFrom = d.targets_file + ": " + percent(d.test_fraction) + " of the labelled images, chosen by name";
  limit(p.train, d.train_limit, true, mixSeed(seed, kLimitStream));
  limit(p.test, d.test_limit, true, mixSeed(seed, kLimitStream + 1));
  p.val = holdOut(p.train, d.val_fraction, mixSeed(seed, kValStream), p.classes());
}

}  // namespace studio
