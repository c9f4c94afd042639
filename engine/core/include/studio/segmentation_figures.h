#pragma once
// A semantic segmentation's figures from its confusion matrix, as
// torchvision's references/segmentation compute them (utils.py,
// ConfusionMatrix: truth pixels outside 0..classes-1, the ignore index
// among them, count for nothing; the matrix is counts[truth][predicted]):
//   pixel accuracy   diag.sum() / total
//   class accuracy   diag / row sums                        (each class's recall)
//   IoU              diag / (row sums + column sums - diag)
// and beside them each class's Dice (2 diag / (row sums + column sums), its
// F1) and the frequency-weighted IoU (the IoUs weighted by each class's
// share of the truth's pixels). A class with no pixel in the truth nor in
// the predictions has no IoU or Dice (NaN; the references' mean is NaN
// then): the means are over the classes that have one, as numpy's nanmean.
// Torch-free (the engine adds its counts from torch.bincount, as the
// references do). Thread: any, one matrix per thread.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace studio {

class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(int64_t classes);
  // counts: classes x classes, row-major, rows the truth (the engine's bincount).
  static ConfusionMatrix fromCounts(int64_t classes, std::vector<int64_t> counts);

  // A mask's pixels: truth values outside 0..classes-1 are left out; a
  // predicted value outside them throws std::invalid_argument.
  void add(const uint8_t* truth, const uint8_t* predicted, int64_t pixels);
  void add(const ConfusionMatrix& other);

  int64_t classes() const { return m_classes; }
  int64_t at(int64_t truth, int64_t predicted) const {
    return m_counts[static_cast<size_t>(truth * m_classes + predicted)];
  }
  const std::vector<int64_t>& counts() const { return m_counts; }
  int64_t total() const;

 private:
  int64_t m_classes;
  std::vector<int64_t> m_counts;
};

struct SegmentationFigures {
  int64_t pixels = 0;  // counted (the ignored left out)
  double pixelAccuracy = 0, meanClassAccuracy = 0, meanIou = 0, meanDice = 0, frequencyWeightedIou = 0;
  std::vector<double> classAccuracy, iou, dice;  // per class; NaN where undefined
};

SegmentationFigures segmentationFigures(const ConfusionMatrix& matrix);

}  // namespace studio
