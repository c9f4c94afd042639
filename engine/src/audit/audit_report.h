#pragma once
// The audit's files (studio/audit.h says what each holds): oof.csv,
// label_issues.csv, residuals.csv (regression), suggested_corrections.csv,
// duplicates.csv, outliers.csv and audit.json.
// Torch-free. Thread: the audit's.

#include <string>
#include <vector>

#include "studio/audit.h"

namespace studio {

// outputs: examples x (classes or targets), the out-of-fold probabilities or
// predicted values; foldOf: each example's fold.
void writeAuditReport(const std::string& dir, const AuditResult& r, const std::vector<double>& outputs,
                      const std::vector<int>& foldOf);

}  // namespace studio
