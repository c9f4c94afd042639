#pragma once
// Tables in CSV files, read with libcsv (quoted fields, embedded delimiters
// and newlines). The delimiter (',' ';' or tab) and a header row are
// detected; data.label_column picks the label, data.ignore_columns what is
// neither label nor feature, and every other column must be numeric.
// Rows are numbered as a spreadsheet shows them: the header is row 1.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

namespace studio {

struct CsvTable {
  std::string path;
  char delimiter = ',';
  bool hasHeader = false;
  std::vector<std::string> columns;            // header names, or "column 0", "column 1", ...
  std::vector<std::vector<std::string>> rows;  // data rows, every one as wide as columns
  int64_t firstRowNumber = 1;                  // the spreadsheet row number of rows[0]
};

// Whether the first row names the columns: guessed (a person's table: a
// column that reads as text in row 1 and as a number in row 2), or known (a
// file whose format says so, such as the audit's and data.corrections'
// tables, which may be text only or hold no rows after it).
enum class CsvHeader { guess, first_row };

// Throws DataError naming the file: unreadable, empty, ragged rows (the row
// and its cell count), fewer than 2 columns.
CsvTable readCsvTable(const std::string& path, CsvHeader header = CsvHeader::guess);

// One field of a CSV file as RFC 4180 writes it: quoted, its quotes doubled,
// when it holds a comma, a quote or a line break.
std::string csvField(const std::string& s);

struct TableColumns {
  int64_t label = -1;            // classification's label column; -1 for a regression
  std::vector<int64_t> targets;  // a regression's target columns
  std::vector<std::string> targetNames;
  std::vector<int64_t> features;
  std::vector<std::string> featureNames;
};

// labelColumn: a header name or a 0-based index; "" the last column. With
// targetColumns (a regression's data.target_columns), those columns are the
// targets instead of a label; an empty list: the label column is the one
// target. Throws DataError naming data.label_column, data.target_columns or
// data.ignore_columns and the file when a column does not exist or is named
// twice, and when no feature column is left.
TableColumns selectColumns(const CsvTable& table, const std::string& labelColumn,
                           const std::vector<std::string>& ignoreColumns,
                           const std::vector<std::string>* targetColumns = nullptr);

struct NumericTable {
  int64_t rows = 0, features = 0, targets = 0;
  std::vector<float> x;                // rows x features, row-major
  std::vector<std::string> labelText;  // each row's label as written (classification)
  std::vector<float> y;                // rows x targets, row-major (regression)
};

// Throws DataError naming the file, row and column of a missing, non-numeric,
// NaN or infinite feature or target value, or a missing label.
NumericTable numericTable(const CsvTable& table, const TableColumns& columns);

// "" when a feature cell is a finite float32 number (then in out), else what
// is wrong with it ("the value is missing", "\"abc\" is not a number ...").
std::string parseFeatureCell(const std::string& cell, float& out);
// A cell without the spaces, tabs and carriage returns at either end.
std::string trimCell(const std::string& cell);

// Class names for label texts: integers sorted by value, anything else sorted
// as text.
std::vector<std::string> classNamesOf(const std::vector<std::string>& labelTexts);

}  // namespace studio
