#include "studio/csv_table.h"

#include <csv.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/utf8.h"

namespace studio {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool parseNumber(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  const char* begin = t.data();
  if (*begin == '+') ++begin;
  const auto [end, ec] = std::from_chars(begin, t.data() + t.size(), out);
  if (ec == std::errc::result_out_of_range && end == t.data() + t.size()) {
    out = std::strtod(t.c_str(), nullptr);  // +-HUGE_VAL beyond double's range, 0 below it
    return true;
  }
  return ec == std::errc() && end == t.data() + t.size();
}

bool parseInteger(const std::string& text, int64_t& out) {
  const std::string t = trim(text);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return !t.empty() && ec == std::errc() && end == t.data() + t.size();
}

// Which of , ; tab occurs most in the first line, outside quotes.
char sniffDelimiter(const std::string& text) {
  int comma = 0, semicolon = 0, tab = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '\n') break;
    comma += c == ',';
    semicolon += c == ';';
    tab += c == '\t';
  }
  if (semicolon > comma && semicolon >= tab) return ';';
  if (tab > comma && tab > semicolon) return '\t';
  return ',';
}

struct Collector {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
};

void onField(void* s, size_t len, void* data) {
  auto* c = static_cast<Collector*>(data);
  c->row.emplace_back(s ? static_cast<const char*>(s) : "", s ? len : 0);
}

void onRow(int, void* data) {
  auto* c = static_cast<Collector*>(data);
  c->rows.push_back(std::move(c->row));
  c->row.clear();
}

std::string hexByte(char c) {
  static const char* digits = "0123456789ABCDEF";
  const auto b = static_cast<unsigned char>(c);
  return {digits[b >> 4], digits[b & 15]};
}

std::string quoteName(const CsvTable& t, int64_t column) {
  return "column \"" + t.columns[static_cast<size_t>(column)] + "\"";
}

}  // namespace

CsvTable readCsvTable(const std::string& path, CsvHeader header) {
  CsvTable t;
  t.path = path;
  std::string text;
  try {
    text = readFileBytes(path, "table");
  } catch (const InputError& e) {
    throw DataError(e.what());
  }
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw DataError("table " + path + " is empty");
  t.delimiter = sniffDelimiter(text);

  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) throw DataError("cannot start the CSV reader for " + path);
  csv_set_delim(&parser, static_cast<unsigned char>(t.delimiter));
  // libcsv grows a field's buffer by a fixed block (128 bytes), each growth a
  // realloc: quadratic in a long field wherever realloc moves the buffer
  // (ASan's always does: a 10 MB cell took over 6 minutes there). No field is
  // longer than the text, so one block of its size grows it at most once;
  // only the pages a field fills are touched.
  csv_set_blk_size(&parser, text.size() + 1);
  Collector c;
  const size_t parsed = csv_parse(&parser, text.data(), text.size(), onField, onRow, &c);
  const bool ok = parsed == text.size() && csv_fini(&parser, onField, onRow, &c) == 0;
  const std::string why = ok ? "" : csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok)
    throw DataError("table " + path + " is not valid CSV near row " + std::to_string(c.rows.size() + 1) + ": " + why +
                    " (a quote that is never closed?)");
  // Rows of only blanks (a trailing empty line) are not data.
  c.rows.erase(std::remove_if(c.rows.begin(), c.rows.end(),
                              [](const std::vector<std::string>& r) {
                                return std::all_of(r.begin(), r.end(),
                                                   [](const std::string& s) { return trim(s).empty(); });
                              }),
               c.rows.end());
  if (c.rows.empty()) throw DataError("table " + path + " has no rows");
  const size_t width = c.rows.front().size();
  if (width < 2)
    throw DataError("table " + path +
                    " has 1 column; it needs a label column and at least one feature column "
                    "(separated by , ; or tab)");
  for (size_t i = 0; i < c.rows.size(); ++i)
    if (c.rows[i].size() != width)
      throw DataError("table " + path + " row " + std::to_string(i + 1) + " has " + std::to_string(c.rows[i].size()) +
                      " cells; row 1 has " + std::to_string(width) + " (a missing or extra '" +
                      (t.delimiter == '\t' ? std::string("tab") : std::string(1, t.delimiter)) + "'?)");

  // A header: known, or some column reads as text in row 1 and as a number in row 2.
  t.hasHeader = header == CsvHeader::first_row;
  double v = 0;
  if (c.rows.size() >= 2) {
    for (size_t j = 0; j < width && !t.hasHeader; ++j)
      t.hasHeader = !parseNumber(c.rows[0][j], v) && parseNumber(c.rows[1][j], v);
  }
  if (t.hasHeader) {
    for (const auto& name : c.rows.front()) {
      if (firstNonUtf8(name) != std::string::npos)
        throw DataError("table " + path + " row 1, column " + std::to_string(t.columns.size()) +
                        ": the column name is not UTF-8 text; the table must be UTF-8: save it again as UTF-8 "
                        "(or iconv -f latin1 -t utf-8)");
      t.columns.push_back(trim(name));
    }
    c.rows.erase(c.rows.begin());
    t.firstRowNumber = 2;
  } else {
    for (size_t j = 0; j < width; ++j) t.columns.push_back("column " + std::to_string(j));
  }
  t.rows = std::move(c.rows);
  return t;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

TableColumns selectColumns(const CsvTable& t, const std::string& labelColumn, const std::vector<std::string>& ignore,
                           const std::vector<std::string>* targetColumns) {
  const auto width = static_cast<int64_t>(t.columns.size());
  // Names to columns once (the first of a repeated name): a long
  // data.ignore_columns costs linear time, not names x columns.
  std::unordered_map<std::string, int64_t> byName;
  for (int64_t j = width - 1; t.hasHeader && j >= 0; --j) byName[t.columns[static_cast<size_t>(j)]] = j;
  auto find = [&](const std::string& name, const std::string& setting) -> int64_t {
    if (const auto it = byName.find(trim(name)); it != byName.end()) return it->second;
    int64_t index = 0;
    if (parseInteger(name, index)) {
      if (index >= 0 && index < width) return index;
      throw DataError(setting + " " + name + " is not a column of table " + t.path + ": it has columns 0 to " +
                      std::to_string(width - 1));
    }
    std::string known;
    for (const auto& c : t.columns) known += (known.empty() ? "" : ", ") + c;
    throw DataError(
        setting + " \"" + name + "\" is not a column of table " + t.path +
        (t.hasHeader ? " (its columns: " + known + ")" : " (it has no header row; give a 0-based column index)"));
  };
  TableColumns cols;
  cols.label = labelColumn.empty() ? width - 1 : find(labelColumn, "data.label_column");
  std::set<int64_t> skip{cols.label};
  if (targetColumns && !targetColumns->empty()) {
    skip.clear();
    for (const auto& name : *targetColumns) {
      const int64_t j = find(name, "data.target_columns entry");
      if (!skip.insert(j).second)
        throw DataError("data.target_columns names column \"" + t.columns[static_cast<size_t>(j)] + "\" of table " +
                        t.path + " twice");
      cols.targets.push_back(j);
    }
  } else if (targetColumns) {
    cols.targets.push_back(cols.label);
  }
  for (int64_t j : cols.targets) cols.targetNames.push_back(t.columns[static_cast<size_t>(j)]);
  if (targetColumns) cols.label = -1;
  for (const auto& name : ignore) {
    const int64_t j = find(name, "data.ignore_columns entry");
    if (targetColumns && skip.count(j))
      throw DataError("data.ignore_columns lists \"" + name + "\", which is a target column of table " + t.path +
                      "; a column is either a target or ignored: remove it from data.ignore_columns or from "
                      "data.target_columns");
    if (!targetColumns && j == cols.label)
      throw DataError("data.ignore_columns lists \"" + name + "\", which is the label column of table " + t.path +
                      (labelColumn.empty() ? " (data.label_column is empty: the last column)"
                                           : " (data.label_column \"" + labelColumn + "\")") +
                      "; a column is either the label or ignored: remove it from data.ignore_columns, or choose "
                      "another data.label_column");
    skip.insert(j);
  }
  for (int64_t j = 0; j < width; ++j)
    if (!skip.count(j)) {
      cols.features.push_back(j);
      cols.featureNames.push_back(t.columns[static_cast<size_t>(j)]);
    }
  if (cols.features.empty())
    throw DataError("table " + t.path + " has no feature columns left besides the " +
                    (targetColumns ? "targets" : "label") + " and data.ignore_columns");
  return cols;
}

std::string trimCell(const std::string& cell) { return trim(cell); }

namespace {
// A cell as a message shows it: at most 60 characters and its length beyond
// (a 10 MB cell is named, not echoed whole).
std::string shownCell(const std::string& cell) {
  if (cell.size() <= 60) return "\"" + cell + "\"";
  size_t cut = 57;
  while (cut > 0 && (static_cast<unsigned char>(cell[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return "\"" + cell.substr(0, cut) + "…\" (" + std::to_string(cell.size()) + " bytes)";
}
}  // namespace

std::string parseFeatureCell(const std::string& cell, float& out) {
  double v = 0;
  if (trim(cell).empty()) return "the value is missing";
  if (!parseNumber(cell, v))
    return shownCell(cell) + " is not a number (list the column in data.ignore_columns if it is not a feature)";
  if (std::isnan(v)) return "the value is NaN";
  if (!std::isfinite(v) || std::fabs(v) > 3.0e38) {
    const std::string t = trim(cell);
    return (t.size() <= 60 ? t : shownCell(t)) + " is not a finite float32 number";
  }
  out = static_cast<float>(v);
  return "";
}

NumericTable numericTable(const CsvTable& t, const TableColumns& cols) {
  NumericTable out;
  out.rows = static_cast<int64_t>(t.rows.size());
  out.features = static_cast<int64_t>(cols.features.size());
  out.targets = static_cast<int64_t>(cols.targets.size());
  out.x.resize(static_cast<size_t>(out.rows * out.features));
  out.y.resize(static_cast<size_t>(out.rows * out.targets));
  out.labelText.reserve(t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string where = "table " + t.path + " row " + std::to_string(static_cast<int64_t>(i) + t.firstRowNumber);
    for (size_t k = 0; k < cols.targets.size(); ++k) {
      std::string why = parseFeatureCell(row[static_cast<size_t>(cols.targets[k])], out.y[i * cols.targets.size() + k]);
      if (why.rfind("\"", 0) == 0) why = shownCell(row[static_cast<size_t>(cols.targets[k])]) + " is not a number";
      if (!why.empty())
        throw DataError(where + ", " + quoteName(t, cols.targets[k]) + ": " + why +
                        " (a target column holds numbers; is this the right column in data.target_columns?)");
    }
    if (cols.label < 0) {
      for (size_t k = 0; k < cols.features.size(); ++k) {
        const std::string why =
            parseFeatureCell(row[static_cast<size_t>(cols.features[k])], out.x[i * cols.features.size() + k]);
        if (!why.empty()) throw DataError(where + ", " + quoteName(t, cols.features[k]) + ": " + why);
      }
      continue;
    }
    const std::string label = trim(row[static_cast<size_t>(cols.label)]);
    if (label.empty()) throw DataError(where + ", " + quoteName(t, cols.label) + ": the label is missing");
    if (const size_t bad = firstNonUtf8(label); bad != std::string::npos)
      throw DataError(where + ", " + quoteName(t, cols.label) + ": the label is not UTF-8 text (byte 0x" +
                      hexByte(label[bad]) + " at its character " + std::to_string(bad + 1) +
                      "; Latin-1's \"\xC3\xA9\" is 0xE9): the table must be UTF-8; save it again as UTF-8 (in "
                      "LibreOffice: Save As, Character set \"Unicode (UTF-8)\"; or iconv -f latin1 -t utf-8)");
    out.labelText.push_back(label);
    for (size_t k = 0; k < cols.features.size(); ++k) {
      const std::string why =
          parseFeatureCell(row[static_cast<size_t>(cols.features[k])], out.x[i * cols.features.size() + k]);
      if (!why.empty()) throw DataError(where + ", " + quoteName(t, cols.features[k]) + ": " + why);
    }
  }
  return out;
}

std::vector<std::string> classNamesOf(const std::vector<std::string>& labels) {
  std::set<std::string> distinct(labels.begin(), labels.end());
  std::vector<std::string> names(distinct.begin(), distinct.end());
  int64_t a = 0;
  const bool integers =
      std::all_of(names.begin(), names.end(), [&](const std::string& s) { return parseInteger(s, a); });
  if (integers)
    std::sort(names.begin(), names.end(), [](const std::string& x, const std::string& y) {
      int64_t p = 0, q = 0;
      parseInteger(x, p);
      parseInteger(y, q);
      return p < q;
    });
  return names;
}

}  // namespace studio
