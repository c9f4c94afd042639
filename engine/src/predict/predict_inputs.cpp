#include "predict/predict_inputs.h"

#include <filesystem>
#include <map>
#include <set>

#include "studio/csv_table.h"
#include "studio/errors.h"
#include "studio/image_folder.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

// Class name -> its index.
std::map<std::string, int64_t> indexOf(const std::vector<std::string>& classes) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < classes.size(); ++i) out.emplace(classes[i], static_cast<int64_t>(i));
  return out;
}

}  // namespace

ImageInputs listImageInputs(const std::string& path, const std::vector<std::string>& classes) {
  std::error_code ec;
  ImageInputs out;
  if (!fs::exists(path, ec)) throw DataError("input " + path + " not found");
  if (!fs::is_directory(path, ec)) {
    out.files.push_back(path);
    out.labels.push_back(-1);
    return out;
  }
  const auto classOf = indexOf(classes);
  int64_t other = 0;
  out.files = imageFilesUnder(path, other);  // sorted by path
  if (out.files.empty())
    throw DataError("folder " + path +
                    " holds no image files (.png .jpg .jpeg .bmp .pgm .ppm), in its sub-folders "
                    "neither");
  for (const auto& file : out.files) {
    int64_t label = -1;
    for (const auto& part : fs::relative(fs::path(file).parent_path(), path, ec))
      if (const auto c = classOf.find(part.string()); c != classOf.end()) {
        label = c->second;
        break;
      }
    out.labels.push_back(label);
  }
  return out;
}

TableInputs readTableInputs(const std::string& path, const std::vector<std::string>& features,
                            const std::string& labelColumn, const std::vector<std::string>& ignoreColumns,
                            const std::vector<std::string>& classes, bool skipBad) {
  const CsvTable t = readCsvTable(path);
  std::map<std::string, int64_t> columnOf;
  for (size_t j = t.columns.size(); j-- > 0;) columnOf[trimCell(t.columns[j])] = static_cast<int64_t>(j);
  std::vector<int64_t> cols;
  for (const auto& f : features) {
    const auto c = columnOf.find(f);
    if (c == columnOf.end())
      throw DataError("table " + path + " has no column \"" + f + "\", a feature the model was trained on (it needs " +
                      std::to_string(features.size()) + " feature columns by name, as its training table had them)");
    cols.push_back(c->second);
  }
  // The label: the setting's column by name, else the one column that is
  // neither a feature nor ignored.
  int64_t label = -1;
  if (const auto c = columnOf.find(labelColumn); !labelColumn.empty() && c != columnOf.end()) {
    label = c->second;
  } else {
    std::set<int64_t> used(cols.begin(), cols.end());
    for (const auto& name : ignoreColumns)
      if (const auto i = columnOf.find(name); i != columnOf.end()) used.insert(i->second);
    std::vector<int64_t> rest;
    for (int64_t j = 0; j < static_cast<int64_t>(t.columns.size()); ++j)
      if (!used.count(j)) rest.push_back(j);
    if (rest.size() == 1) label = rest[0];
  }
  const auto classOf = indexOf(classes);

  TableInputs out;
  out.rows = static_cast<int64_t>(t.rows.size());
  out.features = static_cast<int64_t>(cols.size());
  out.x.assign(static_cast<size_t>(out.rows * out.features), 0.0f);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string source = "row " + std::to_string(static_cast<int64_t>(i) + t.firstRowNumber);
    std::string error;
    for (size_t k = 0; k < cols.size() && error.empty(); ++k) {
      const std::string why = parseFeatureCell(row[static_cast<size_t>(cols[k])], out.x[i * cols.size() + k]);
      if (!why.empty()) error = "column \"" + features[k] + "\": " + why;
    }
    if (!error.empty() && !skipBad) throw DataError("table " + path + " " + source + ", " + error);
    int64_t y = -1;
    if (label >= 0)
      if (const auto c = classOf.find(trimCell(row[static_cast<size_t>(label)])); c != classOf.end()) y = c->second;
    out.sources.push_back(source);
    out.labels.push_back(y);
    out.errors.push_back(error);
  }
  if (out.rows == 0) throw DataError("table " + path + " has no rows to predict");
  return out;
}

}  // namespace studio
