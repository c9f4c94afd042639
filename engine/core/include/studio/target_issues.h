#pragma once
// The audit's suspects where an example has targets instead of one class:
//  - regression: the examples whose out-of-fold prediction is far from their
//    value, in units of the residuals' spread: z = (value - prediction) / s,
//    s the standard deviation of that target's residuals over all examples
//    (n - 1 in its denominator); |z| >= a threshold (3 by default) is a
//    suspect, ranked by |z|.
//  - multi-label: confident learning one label at a time (findLabelIssues of
//    studio/label_issues.h on that label's 0/1 values and the probabilities
//    1 - p, p), as cleanlab's find_label_issues(..., multi_label=True)
//    defines it; an example is a suspect when any of its labels is, and each
//    suspect label is listed with its given value and self-confidence.
// And the folds' figures of such data: R² (each target's, averaged, as
// scikit-learn's r2_score), the share of labels right at their thresholds.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <vector>

#include "studio/label_issues.h"

namespace studio {

struct ResidualIssue {
  int64_t index = 0;  // the example
  int64_t target = 0;
  double given = 0, predicted = 0;
  double z = 0;  // (given - predicted) / the target's residual spread
};

struct ResidualIssues {
  std::vector<double> spread;         // per target: the residuals' standard deviation
  std::vector<ResidualIssue> issues;  // |z| >= threshold, largest |z| first
};

// given, predicted: n x targets, row-major.
ResidualIssues findResidualIssues(const std::vector<double>& given, const std::vector<double>& predicted,
                                  int64_t targets, double threshold);

struct TagIssue {
  int64_t index = 0;  // the example
  int64_t label = 0;
  int given = 0;              // 0 or 1
  double selfConfidence = 0;  // the probability of the given value: p, or 1 - p
};

struct TagIssues {
  std::vector<LabelIssues> perLabel;  // each label's confident learning (binary)
  std::vector<TagIssue> issues;       // every suspect label, lowest self-confidence first
  int64_t examples = 0;               // examples with at least one suspect label
};

// given: n x labels of 0 or 1; probs: n x labels, each the label's probability.
TagIssues findTagIssues(const std::vector<int64_t>& given, const std::vector<double>& probs, int64_t labels);

// R² of predictions (n x targets) of the values given, averaged over the
// targets (a target of constant values: 1 when predicted exactly, else 0,
// as scikit-learn's r2_score).
double r2Score(const std::vector<double>& given, const std::vector<double>& predicted, int64_t targets);

}  // namespace studio
