#pragma once
// task.kind classification on an image folder whose classes are in a labels
// file (data.targets_file): the Label tab's CSV of file,label[,made_by]
// (studio/label_store.h), or any CSV whose first column names each image
// under data.root and whose data.label_column (empty: the column named
// "label", else the second) holds its class. Images without a row, or with
// an empty label, are not labelled yet and are left out (said, counted).
// The test split is fixed by each image's name (issue 62, item 5: a
// training on more labels tests on the same images as before, and on the
// new ones whose names fall in the test share), not drawn anew as the
// labelled set grows. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "studio/data_plan.h"
#include "studio/train_config.h"

namespace studio {

// Throws DataError naming the file and row: an image that is not a file
// under data.root, one named twice, a label column that is not there,
// fewer than 2 classes labelled.
void planFolderLabels(DataPlan& plan, const DataConfig& data, uint64_t seed);

// A targets table's row `row` naming the image `name` under data.root (a
// relative name, or an absolute one, resolved through links and "..":
// outside the folder is refused alike), each image once: the path as named
// and as resolved; rowOf (resolved image -> its row) records it. Throws
// DataError naming the file, row and image: not a file under data.root, or
// named in an earlier row (`once`: what each image is given once).
struct RowImage {
  std::filesystem::path given, resolved;
};
RowImage rowImage(const std::string& name, int64_t row, const DataConfig& data, const std::filesystem::path& root,
                  std::map<std::string, int64_t>& rowOf, const char* once);

// Whether the image named `name` (relative to data.root) is in the test
// share `fraction` for this seed: the same answer whatever else is labelled.
bool testByName(const std::string& name, double fraction, uint64_t seed);

}  // namespace studio
