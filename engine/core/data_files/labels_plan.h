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
#include <string>

#include "studio/data_plan.h"
#include "studio/train_config.h"

namespace studio {

// Throws DataError naming the file and row: an image that is not a file
// under data.root, one named twice, a label column that is not there,
// fewer than 2 classes labelled.
void planFolderLabels(DataPlan& plan, const DataConfig& data, uint64_t seed);

// Whether the image named `name` (relative to data.root) is in the test
// share `fraction` for this seed: the same answer whatever else is labelled.
bool testByName(const std::string& name, double fraction, uint64_t seed);

}  // namespace studio
