#pragma once
// The audit's searches in a feature space (the trained model's penultimate
// features): pairs of examples whose cosine similarity reaches a threshold,
// and how unlike the rest of its class each example is (the mean cosine
// distance to its k nearest neighbours of the same class, the k-nearest-
// neighbour score cleanlab's out-of-distribution detection uses). Both are
// blocked matrix products on the device (the GPU when there is one): 60,000
// examples of 512 features take seconds, not a Python loop's minutes.
// Torch-free interface. Thread: any one thread.

#include <cstdint>
#include <vector>

namespace studio {

struct SimilarPair {
  int64_t first = 0, second = 0;  // rows of a and of b
  double similarity = 0;
};

// a: n x dim, b: m x dim, row-major. sameSet: a and b are the same rows,
// and only first < second is reported. nearest (when given): for each row
// of a, its most similar row of b (sameSet: not itself; the first of
// equals), from the same products; left empty when b holds no other row.
std::vector<SimilarPair> similarPairs(const std::vector<float>& a, const std::vector<float>& b, int64_t dim,
                                      double threshold, bool sameSet, std::vector<SimilarPair>* nearest = nullptr);

// features: n x dim; labels: n classes. Each example's mean cosine distance
// to its k nearest neighbours with the same label (fewer when its class is
// smaller; 0 for a class of one).
std::vector<double> outlierScores(const std::vector<float>& features, int64_t dim, const std::vector<int64_t>& labels,
                                  int64_t k);

}  // namespace studio
