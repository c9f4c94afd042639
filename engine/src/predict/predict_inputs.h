#pragma once
// What `predict` is asked about, before anything is decoded: the image files
// of a file or folder with the labels their class folders give, or a table's
// rows as the run's features (matched by column name) and labels.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

namespace studio {

struct ImageInputs {
  std::vector<std::string> files;  // sorted by path
  std::vector<int64_t> labels;     // a class index, or -1
};

// A file (any image, whatever its name) or a folder (its image files, in
// sub-folders too, hidden ones left out). Below the folder, the first folder
// on a file's path named as a class labels it. Throws DataError naming the
// path: missing, unreadable, or a folder without images.
ImageInputs listImageInputs(const std::string& path, const std::vector<std::string>& classes);

struct TableInputs {
  int64_t rows = 0, features = 0;
  std::vector<float> x;              // rows x features, as written (not normalised)
  std::vector<int64_t> labels;       // a class index, or -1
  std::vector<std::string> sources;  // "row N"
  std::vector<std::string> errors;   // "" or why the row cannot be predicted
};

// The run's feature columns by name (in the run's order), and its label
// column when the table has it (labelColumn: the setting; "" or an index:
// the one column left over, if exactly one is). Throws DataError naming the
// file and the first feature column it lacks; a cell that is not a number
// names its row and column, thrown unless skipBad (then that row's error).
TableInputs readTableInputs(const std::string& path, const std::vector<std::string>& features,
                            const std::string& labelColumn, const std::vector<std::string>& ignoreColumns,
                            const std::vector<std::string>& classes, bool skipBad);

}  // namespace studio
