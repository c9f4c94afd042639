#pragma once
// One label's (or one class's, one-vs-rest) ranking figures from scores and
// 0/1 truths, as scikit-learn computes them: the ROC curve and its area
// (roc_curve, roc_auc_score), the precision-recall curve and the average
// precision (precision_recall_curve, average_precision_score: the sum over
// thresholds of the recall's increase times the precision there), and the
// threshold of the best F1. Curves are kept at up to kCurvePoints points for
// plotting; the areas are computed from every threshold.
// Torch-free. Thread: free functions, any thread.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace studio {

inline constexpr size_t kCurvePoints = 200;

struct BinaryCurves {
  int64_t positives = 0, negatives = 0;
  double rocAuc = 0;                           // NaN without positives or without negatives
  double averagePrecision = 0;                 // NaN without positives
  double bestF1 = 0, bestThreshold = 0.5;      // predicting positive at score >= bestThreshold
  std::vector<std::pair<double, double>> roc;  // (false positive rate, true positive rate), from (0, 0)
  std::vector<std::pair<double, double>> pr;   // (recall, precision), by falling threshold
};

// scores and truths of the same length (truth: 0 or 1).
BinaryCurves binaryCurves(const std::vector<float>& scores, const std::vector<uint8_t>& truth);

}  // namespace studio
