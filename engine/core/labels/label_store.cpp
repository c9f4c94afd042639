#include "studio/label_store.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "studio/csv_table.h"
#include "studio/errors.h"

namespace studio {
namespace fs = std::filesystem;

LabelStore::LabelStore(const std::string& labelsCsv) : m_path(labelsCsv), m_journal(labelsCsv, "labels file") {
  m_labels = readCsv();
  replayJournal();
}

LabelStore::~LabelStore() = default;

std::map<std::string, ImageLabel> LabelStore::readCsv() const {
  std::map<std::string, ImageLabel> out;
  std::error_code ec;
  if (!fs::exists(m_path, ec)) return out;
  if (fs::file_size(m_path, ec) == 0) return out;
  CsvTable t;
  try {
    t = readCsvTable(m_path, CsvHeader::first_row);
  } catch (const DataError& e) {
    throw InputError(std::string("labels file: ") + e.what());
  }
  int file = -1, label = -1, by = -1;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    const std::string name = trimCell(t.columns[c]);
    if (name == "file") file = static_cast<int>(c);
    if (name == "label") label = static_cast<int>(c);
    if (name == "made_by") by = static_cast<int>(c);
  }
  if (file < 0 || label < 0)
    throw InputError("labels file " + m_path + " needs the columns file and label (and made_by) in its first row");
  std::map<std::string, int64_t> rowOf;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const int64_t row = t.firstRowNumber + static_cast<int64_t>(r);
    const std::string where = m_path + " row " + std::to_string(row);
    ImageLabel l;
    const std::string f = trimCell(t.rows[r][static_cast<size_t>(file)]);
    l.label = trimCell(t.rows[r][static_cast<size_t>(label)]);
    if (by >= 0 && !trimCell(t.rows[r][static_cast<size_t>(by)]).empty())
      l.madeBy = trimCell(t.rows[r][static_cast<size_t>(by)]);
    if (f.empty() || l.label.empty()) throw InputError(where + ": a row needs a file and its label");
    requireNameInFolder(f, where);
    requireKnownMaker(l.madeBy, where);
    if (const auto seen = rowOf.find(f); seen != rowOf.end())
      throw InputError(where + ": " + f + " is labelled already in row " + std::to_string(seen->second) +
                       "; keep one row per image");
    rowOf[f] = row;
    out[f] = l;
  }
  return out;
}

void LabelStore::replayJournal() {
  for (const nlohmann::json& j : m_journal.replayed()) {
    if (j.contains("set") && j["set"].is_string() && j.contains("label") && j["label"].is_string() &&
        nameInFolder(j["set"].get<std::string>())) {
      const ImageLabel l{j["label"].get<std::string>(), j.value("by", std::string("person"))};
      m_labels[j["set"].get<std::string>()] = l;
      m_changes[j["set"].get<std::string>()] = l;
    } else if (j.contains("clear") && j["clear"].is_string()) {
      m_labels.erase(j["clear"].get<std::string>());
      m_changes[j["clear"].get<std::string>()] = std::nullopt;
    }
  }
}

void LabelStore::set(const std::string& file, const std::string& label, const std::string& madeBy) {
  if (file.empty() || label.empty()) throw InputError("a label needs an image and a class");
  requireNameInFolder(file, "a label");
  requireKnownMaker(madeBy);
  m_journal.append({{"set", file}, {"label", label}, {"by", madeBy}});
  m_labels[file] = {label, madeBy};
  m_changes[file] = ImageLabel{label, madeBy};
}

void LabelStore::clear(const std::string& file) {
  m_journal.append({{"clear", file}});
  m_labels.erase(file);
  m_changes[file] = std::nullopt;
}

std::optional<ImageLabel> LabelStore::labelOf(const std::string& file) const {
  const auto it = m_labels.find(file);
  if (it == m_labels.end()) return std::nullopt;
  return it->second;
}

std::string LabelStore::compact() {
  std::string merged;
  if (changedOnDisk()) {
    // Another program's edits: its rows, with this store's changes on top.
    std::map<std::string, ImageLabel> theirs = readCsv();
    int64_t kept = 0;
    for (const auto& [file, change] : m_changes) {
      if (change)
        theirs[file] = *change;
      else
        theirs.erase(file);
    }
    for (const auto& [file, l] : theirs)
      if (!m_changes.count(file) && !(m_labels.count(file) && m_labels.at(file) == l)) ++kept;
    m_labels = std::move(theirs);
    merged = m_path + " was changed by another program: its " + std::to_string(kept) +
             " new or changed rows kept, this window's " + std::to_string(m_changes.size()) + " changes on top";
  }
  std::string csv = "file,label,made_by\n";
  for (const auto& [file, l] : m_labels) csv += csvField(file) + "," + csvField(l.label) + "," + l.madeBy + "\n";
  m_journal.writeFile(csv);
  m_changes.clear();
  return merged;
}

}  // namespace studio
