#include "studio/segmentation_figures.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace studio {

ConfusionMatrix::ConfusionMatrix(int64_t classes) : m_classes(classes) {
  if (classes < 1 || classes > 256)
    throw std::invalid_argument("a segmentation has 1 to 256 classes, not " + std::to_string(classes));
  m_counts.assign(static_cast<size_t>(classes * classes), 0);
}

ConfusionMatrix ConfusionMatrix::fromCounts(int64_t classes, std::vector<int64_t> counts) {
  ConfusionMatrix m(classes);
  if (counts.size() != m.m_counts.size())
    throw std::invalid_argument("a confusion matrix of " + std::to_string(classes) + " classes has " +
                                std::to_string(m.m_counts.size()) + " counts, not " + std::to_string(counts.size()));
  m.m_counts = std::move(counts);
  return m;
}

void ConfusionMatrix::add(const uint8_t* truth, const uint8_t* predicted, int64_t pixels) {
  const int64_t c = m_classes;
  int64_t* counts = m_counts.data();
  for (int64_t i = 0; i < pixels; ++i) {
    const int64_t t = truth[i], p = predicted[i];
    if (p >= c)
      throw std::invalid_argument("a predicted class " + std::to_string(p) + " of " + std::to_string(c) + " classes");
    if (t < c) ++counts[t * c + p];
  }
}

void ConfusionMatrix::add(const ConfusionMatrix& other) {
  if (other.m_classes != m_classes) throw std::invalid_argument("confusion matrices of different class counts");
  for (size_t i = 0; i < m_counts.size(); ++i) m_counts[i] += other.m_counts[i];
}

int64_t ConfusionMatrix::total() const {
  int64_t n = 0;
  for (int64_t v : m_counts) n += v;
  return n;
}

SegmentationFigures segmentationFigures(const ConfusionMatrix& m) {
  const int64_t c = m.classes();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SegmentationFigures f;
  f.pixels = m.total();
  std::vector<double> rows(static_cast<size_t>(c), 0.0), columns(static_cast<size_t>(c), 0.0);
  double diagonal = 0;
  for (int64_t t = 0; t < c; ++t)
    for (int64_t p = 0; p < c; ++p) {
      const auto v = static_cast<double>(m.at(t, p));
      rows[static_cast<size_t>(t)] += v;
      columns[static_cast<size_t>(p)] += v;
      if (t == p) diagonal += v;
    }
  f.pixelAccuracy = f.pixels > 0 ? diagonal / static_cast<double>(f.pixels) : nan;
  auto nanMean = [](const std::vector<double>& v) {
    double sum = 0;
    int n = 0;
    for (double x : v)
      if (!std::isnan(x)) sum += x, ++n;
    return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
  };
  double weighted = 0;
  for (int64_t k = 0; k < c; ++k) {
    const auto i = static_cast<size_t>(k);
    const auto d = static_cast<double>(m.at(k, k));
    f.classAccuracy.push_back(rows[i] > 0 ? d / rows[i] : nan);
    const double either = rows[i] + columns[i];
    f.iou.push_back(either > 0 ? d / (either - d) : nan);
    f.dice.push_back(either > 0 ? 2 * d / either : nan);
    if (rows[i] > 0) weighted += rows[i] * f.iou.back();
  }
  f.meanClassAccuracy = nanMean(f.classAccuracy);
  f.meanIou = nanMean(f.iou);
  f.meanDice = nanMean(f.dice);
  f.frequencyWeightedIou = f.pixels > 0 ? weighted / static_cast<double>(f.pixels) : nan;
  return f;
}

}  // namespace studio
