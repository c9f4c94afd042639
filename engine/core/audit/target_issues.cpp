#include "studio/target_issues.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace studio {
namespace {

void checkShape(size_t a, size_t b, int64_t columns, const char* what) {
  if (columns < 1 || a != b || a % static_cast<size_t>(columns) != 0)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(a) + " and " + std::to_string(b) +
                                " values for " + std::to_string(columns) + " columns");
}

}  // namespace

ResidualIssues findResidualIssues(const std::vector<double>& given, const std::vector<double>& predicted,
                                  int64_t targets, double threshold) {
  checkShape(given.size(), predicted.size(), targets, "residual issues");
  const auto T = static_cast<size_t>(targets);
  const size_t n = given.size() / T;
  ResidualIssues out;
  out.spread.assign(T, 0.0);
  for (size_t t = 0; t < T; ++t) {
    double mean = 0;
    for (size_t i = 0; i < n; ++i) mean += (given[i * T + t] - predicted[i * T + t]) / static_cast<double>(n);
    double sq = 0;
    for (size_t i = 0; i < n; ++i) {
      const double d = given[i * T + t] - predicted[i * T + t] - mean;
      sq += d * d;
    }
    out.spread[t] = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t t = 0; t < T; ++t) {
      if (!(out.spread[t] > 0)) continue;  // every prediction exact: nothing stands out
      const double z = (given[i * T + t] - predicted[i * T + t]) / out.spread[t];
      if (std::abs(z) >= threshold)
        out.issues.push_back(
            {static_cast<int64_t>(i), static_cast<int64_t>(t), given[i * T + t], predicted[i * T + t], z});
    }
  std::stable_sort(out.issues.begin(), out.issues.end(),
                   [](const ResidualIssue& a, const ResidualIssue& b) { return std::abs(a.z) > std::abs(b.z); });
  return out;
}

TagIssues findTagIssues(const std::vector<int64_t>& given, const std::vector<double>& probs, int64_t labels) {
  checkShape(given.size(), probs.size(), labels, "multi-label issues");
  const auto L = static_cast<size_t>(labels);
  const size_t n = given.size() / L;
  TagIssues out;
  std::vector<char> suspect(n, 0);
  for (size_t l = 0; l < L; ++l) {
    std::vector<int64_t> binary(n);
    std::vector<double> twoColumns(2 * n);
    for (size_t i = 0; i < n; ++i) {
      binary[i] = given[i * L + l] != 0 ? 1 : 0;
      twoColumns[2 * i] = 1.0 - probs[i * L + l];
      twoColumns[2 * i + 1] = probs[i * L + l];
    }
    out.perLabel.push_back(findLabelIssues(binary, twoColumns, 2));
    for (const LabelIssue& is : out.perLabel.back().issues) {
      out.issues.push_back({is.index, static_cast<int64_t>(l), static_cast<int>(is.given), is.selfConfidence});
      suspect[static_cast<size_t>(is.index)] = 1;
    }
  }
  std::stable_sort(out.issues.begin(), out.issues.end(),
                   [](const TagIssue& a, const TagIssue& b) { return a.selfConfidence < b.selfConfidence; });
  out.examples = std::count(suspect.begin(), suspect.end(), 1);
  return out;
}

double r2Score(const std::vector<double>& given, const std::vector<double>& predicted, int64_t targets) {
  checkShape(given.size(), predicted.size(), targets, "R2");
  const auto T = static_cast<size_t>(targets);
  const size_t n = given.size() / T;
  if (n == 0) return 0;
  double sum = 0;
  for (size_t t = 0; t < T; ++t) {
    double mean = 0;
    for (size_t i = 0; i < n; ++i) mean += given[i * T + t];
    mean /= static_cast<double>(n);
    double residual = 0, total = 0;
    for (size_t i = 0; i < n; ++i) {
      residual += (given[i * T + t] - predicted[i * T + t]) * (given[i * T + t] - predicted[i * T + t]);
      total += (given[i * T + t] - mean) * (given[i * T + t] - mean);
    }
    sum += total > 0 ? 1.0 - residual / total : (residual == 0 ? 1.0 : 0.0);
  }
  return sum / static_cast<double>(T);
}

}  // namespace studio
