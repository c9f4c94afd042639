#pragma once
// Confident learning (Northcutt, Jiang and Chuang, "Confident Learning:
// Estimating Uncertainty in Dataset Labels", JAIR 70, 2021): the examples
// whose given label is likely wrong, from out-of-sample predicted
// probabilities. Implemented from the paper: the per-class thresholds
// (section 3.1, the mean self-confidence of each given class), the confident
// joint and its calibration to the given labels' counts (eq. 2 and 3), then
// "prune by noise rate" (section 3.2, method Cconfusion's sibling PBNR): for
// every off-diagonal count of the joint, that many examples of the given
// class with the largest margin p(true) - p(given), leaving at least one
// example in each class; an example the model itself predicts as its given
// label is never flagged. The set found equals cleanlab's
// find_label_issues(labels, pred_probs, filter_by="prune_by_noise_rate")
// (tests/test_audit.py checks it against cleanlab on the same probabilities;
// cleanlab's code is AGPL and is not part of the studio).
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <vector>

namespace studio {

struct LabelIssue {
  int64_t index = 0;          // position in the labels given
  int64_t given = 0;          // its label
  int64_t suggested = 0;      // the class the probabilities favour
  double selfConfidence = 0;  // p(given): the lower, the more likely wrong
};

struct LabelIssues {
  // The calibrated confident joint, [given][true]: its rows sum to each
  // class's count of given labels.
  std::vector<std::vector<int64_t>> confidentJoint;
  std::vector<double> thresholds;  // per class: the mean p(k) over the examples labelled k
  std::vector<LabelIssue> issues;  // ranked: lowest self-confidence first
};

// labels: n values in 0..classes-1; probs: n x classes, row-major, each row
// a distribution (out-of-sample: e.g. the out-of-fold probabilities of a
// cross-validation). Throws std::invalid_argument on shapes that disagree.
LabelIssues findLabelIssues(const std::vector<int64_t>& labels, const std::vector<double>& probs, int64_t classes);

// Rounds each value to an integer so that the rounded values sum to the
// rounded sum (the calibration's counts stay whole examples): round half to
// even, then the values whose rounding lost (or gained) most move by one.
std::vector<int64_t> roundPreservingSum(const std::vector<double>& values);

}  // namespace studio
