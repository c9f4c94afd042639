#pragma once
// How well a classifier's confidence matches its accuracy: the reliability
// diagram's bins and the expected calibration error (Guo et al. 2017, "On
// Calibration of Modern Neural Networks"): the top-label confidences in
// kCalibrationBins equal bins of (0, 1] (a confidence c falls in the bin
// (b/B, (b+1)/B] that holds it), each bin's mean confidence and accuracy,
// and ECE = sum over bins of (count / n) x |accuracy - confidence|.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <limits>
#include <vector>

namespace studio {

inline constexpr int kCalibrationBins = 15;

struct Reliability {
  std::vector<int64_t> count;                             // examples per bin
  std::vector<double> confidence, accuracy;               // their means (NaN in an empty bin)
  double ece = std::numeric_limits<double>::quiet_NaN();  // NaN without examples or bins
};

// confidence: each example's top-label probability; correct: whether that
// label was right.
Reliability reliabilityOf(const std::vector<float>& confidence, const std::vector<uint8_t>& correct,
                          int bins = kCalibrationBins);

}  // namespace studio
