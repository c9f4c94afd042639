#pragma once
// data.corrections: a person's decisions about their data (the audit's
// corrections.csv), applied to a run without touching the files. A CSV
// table with the columns file, action and label:
//   file    an image under data.root, relative to it (or absolute), or a
//           table's row as the audit names it, "<table> row N" (N its
//           spreadsheet row; a relative table beside data.root's)
//   action  relabel (to label, a class name; data of classes only), remove
//           (left out of every split), or keep (nothing changes; reviewed)
// Applied after the splits are drawn, so a file stays in the split it was
// in: a removed one leaves it, a relabelled one counts under its new class.
// Image folders and tables of every task.kind. Torch-free. Thread: any.

#include <cstdint>
#include <string>

#include "studio/data_plan.h"

namespace studio {

// Throws DataError naming the corrections file, its row and what is wrong:
// a file that is not one of the data's images, an unknown class or action,
// data the corrections cannot apply to.
void applyCorrections(DataPlan& plan, const DataConfig& data);

}  // namespace studio
