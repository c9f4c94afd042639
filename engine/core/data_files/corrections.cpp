#include "studio/corrections.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "studio/csv_table.h"
#include "studio/errors.h"

namespace studio {
namespace {

namespace fs = std::filesystem;

std::string canonical(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

int64_t column(const CsvTable& t, const std::string& name) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  if (it == t.columns.end())
    throw DataError("data.corrections " + t.path + " has no column \"" + name +
                    "\": its first row names the columns file, action and label");
  return it - t.columns.begin();
}

// A name of the file column, resolved: an image's canonical path (relative
// names under data.root), or a table's row "<table> row N" with the table's
// canonical path (a relative table beside data.root's).
std::string resolvedName(const DataPlan& p, const DataConfig& d, const std::string& name) {
  if (p.kind == DataKind::Image) return canonical(fs::path(name).is_absolute() ? name : d.root + "/" + name);
  const size_t at = name.rfind(" row ");
  if (at == std::string::npos) return name;
  const std::string table = name.substr(0, at);
  std::string path = table;
  if (!fs::path(table).is_absolute() && !fs::exists(table))
    path = (fs::path(p.trainTable).parent_path() / table).string();
  return canonical(path) + name.substr(at);
}

// Each example by its resolved name: an image's file, a table's row as
// exampleSource names it (its spreadsheet row).
std::map<std::string, int64_t> examplesByName(const DataPlan& p, const DataConfig& d) {
  std::map<std::string, int64_t> itemOf;
  if (p.kind == DataKind::Image) {
    for (size_t i = 0; i < p.files.size(); ++i) itemOf[canonical(p.files[i])] = static_cast<int64_t>(i);
    return itemOf;
  }
  for (int64_t item = 0; item < p.table.rows; ++item) itemOf[resolvedName(p, d, exampleSource(p, item))] = item;
  return itemOf;
}

// Training examples per class (none for data without classes).
std::vector<int64_t> trainingCounts(const DataPlan& p) {
  std::vector<int64_t> n(p.hasTargets() || p.detection() ? 0 : static_cast<size_t>(p.classes()), 0);
  for (int64_t label : p.train.labels)
    if (label >= 0 && static_cast<size_t>(label) < n.size()) ++n[static_cast<size_t>(label)];
  return n;
}

// The checks the data had before its corrections, again after them (issue
// 59, item 12): no training example left, every training example of one
// class, a class that had training examples and has none.
void checkCorrected(const DataPlan& p, const DataConfig& d, const std::vector<int64_t>& before) {
  const std::string by = "data.corrections " + d.corrections;
  if (p.train.items.empty())
    throw DataError(by + " removes every training example (" + std::to_string(p.correctionsRemoved) +
                    " removed): nothing is left to train on; keep some of them");
  if (p.test.items.empty() && d.cv_folds == 0)
    throw DataError(by + " removes every test example of " + p.testFrom + ": nothing is left to test on");
  const std::vector<int64_t> after = trainingCounts(p);
  std::vector<std::string> emptied, left;
  for (size_t k = 0; k < after.size(); ++k) {
    if (after[k] > 0) left.push_back(p.classNames[k]);
    if (after[k] == 0 && before[k] > 0) emptied.push_back("\"" + p.classNames[k] + "\"");
  }
  if (after.size() >= 2 && left.size() == 1)
    throw DataError(by + " leaves every training example in class \"" + left.front() +
                    "\": a classifier needs examples of two classes or more");
  if (!emptied.empty()) {
    std::string names;
    for (size_t i = 0; i < emptied.size() && i < 5; ++i) names += (i ? ", " : "") + emptied[i];
    if (emptied.size() > 5) names += " and " + std::to_string(emptied.size() - 5) + " more";
    throw DataError(by + " removes or relabels every training example of class " + names +
                    ": a class without examples cannot be learnt; keep some of them, or leave the class's "
                    "folder out of data.root");
  }
}

}  // namespace

void applyCorrections(DataPlan& p, const DataConfig& d) {
  if (d.corrections.empty()) return;
  if (p.format == DataFormat::idx)
    throw DataError("data.corrections applies to image folders and tables (data.format image_folder or csv)");
  const bool table = p.kind == DataKind::Table;
  const CsvTable t = readCsvTable(d.corrections, CsvHeader::first_row);
  const int64_t fileCol = column(t, "file"), actionCol = column(t, "action"), labelCol = column(t, "label");
  const std::map<std::string, int64_t> itemOf = examplesByName(p, d);
  std::map<int64_t, int64_t> relabel;  // item -> class
  std::map<int64_t, bool> remove;
  std::map<int64_t, std::pair<int64_t, std::string>> decided;  // item -> (row, decision)
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    const std::string where =
        "data.corrections " + t.path + " row " + std::to_string(static_cast<int64_t>(r) + t.firstRowNumber);
    const std::string file = trimCell(row[static_cast<size_t>(fileCol)]);
    const std::string action = trimCell(row[static_cast<size_t>(actionCol)]);
    const std::string label = trimCell(row[static_cast<size_t>(labelCol)]);
    const auto found = itemOf.find(resolvedName(p, d, file));
    if (file.empty() || found == itemOf.end())
      throw DataError(where + ": \"" + file + "\" is not " +
                      (table ? "a row of the data's tables (\"" + exampleSource(p, 0) + "\" names one)"
                             : "one of the images under data.root " + d.root));
    // One decision per file: with two, the last won without a word (issue 59, item 12).
    const auto rowNumber = static_cast<int64_t>(r) + t.firstRowNumber;
    const std::string decision = action == "relabel" ? "relabel to " + label : action;
    if (const auto [at, fresh] = decided.try_emplace(found->second, rowNumber, decision);
        !fresh && at->second.second != decision)
      throw DataError("data.corrections " + t.path + " rows " + std::to_string(at->second.first) + " and " +
                      std::to_string(rowNumber) + " decide \"" + file + "\" twice (" + at->second.second + ", then " +
                      decision + "): keep one decision per file");
    if (action == "relabel" && p.hasTargets())
      throw DataError(where + ": relabel gives an example another class, and " + d.format + " data of task.kind " +
                      p.task + " has no classes: remove the example, or correct its " +
                      (p.regression() ? "values" : "labels") + " in " + (table ? "its table" : d.targets_file));
    if (action == "relabel") {
      const auto cls = std::find(p.classNames.begin(), p.classNames.end(), label);
      if (cls == p.classNames.end()) {
        std::string names;
        for (const auto& n : p.classNames) names += (names.empty() ? "" : ", ") + n;
        throw DataError(where + ": class \"" + label + "\" is not one of the data's classes (" + names + ")");
      }
      relabel[found->second] = cls - p.classNames.begin();
    } else if (action == "remove") {
      remove[found->second] = true;
    } else if (action != "keep") {
      throw DataError(where + ": action \"" + action + "\" is none of relabel, remove and keep");
    }
  }
  const std::vector<int64_t> before = trainingCounts(p);
  for (PlannedSplit* s : {&p.train, &p.val, &p.test}) {
    PlannedSplit out;
    for (size_t i = 0; i < s->items.size(); ++i) {
      const int64_t item = s->items[i];
      if (remove.count(item)) {
        ++p.correctionsRemoved;
        continue;
      }
      int64_t label = s->labels[i];
      if (const auto it = relabel.find(item); it != relabel.end() && it->second != label) {
        label = it->second;
        ++p.correctionsRelabelled;
      }
      out.items.push_back(item);
      out.labels.push_back(label);
    }
    *s = std::move(out);
  }
  checkCorrected(p, d, before);
}

}  // namespace studio
