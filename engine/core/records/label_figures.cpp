// computeLabelFigures (studio/eval_report.h): a multi-label evaluation's figures.
#include <cmath>
#include <limits>

#include "studio/binary_curves.h"
#include "studio/eval_report.h"

namespace studio {

void computeLabelFigures(EvalReport& r, const std::vector<std::string>& names, const std::vector<float>& probs,
                         const std::vector<uint8_t>& truth, const std::vector<double>& thresholds) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const size_t labels = names.size();
  const size_t n = labels > 0 ? probs.size() / labels : 0;
  r.task = TaskKind::multilabel;
  r.examples = static_cast<int64_t>(n);
  r.labels.assign(labels, {});
  int64_t tpAll = 0, fpAll = 0, fnAll = 0, exact = 0;
  std::vector<uint8_t> rowRight(n, 1);
  double f1Sum = 0, apSum = 0;
  int64_t apLabels = 0;
  for (size_t k = 0; k < labels; ++k) {
    LabelFigures& f = r.labels[k];
    f.name = names[k];
    const double threshold = k < thresholds.size() ? thresholds[k] : 0.5;
    f.threshold = threshold;
    std::vector<float> scores(n);
    std::vector<uint8_t> has(n);
    for (size_t i = 0; i < n; ++i) {
      scores[i] = probs[i * labels + k];
      has[i] = truth[i * labels + k];
      const bool said = scores[i] >= threshold;
      f.support += has[i];
      f.predicted += said;
      f.correct += said && has[i];
      if (said != static_cast<bool>(has[i])) rowRight[i] = 0;
    }
    const int64_t fp = f.predicted - f.correct, fn = f.support - f.correct;
    f.precision = f.predicted > 0 ? static_cast<double>(f.correct) / static_cast<double>(f.predicted) : kNaN;
    f.recall = f.support > 0 ? static_cast<double>(f.correct) / static_cast<double>(f.support) : kNaN;
    const int64_t denominator = 2 * f.correct + fp + fn;
    f.f1 = denominator > 0 ? 2.0 * static_cast<double>(f.correct) / static_cast<double>(denominator) : 0.0;
    const BinaryCurves c = binaryCurves(scores, has);
    f.averagePrecision = c.averagePrecision;
    f.rocAuc = c.rocAuc;
    f.bestF1 = c.bestF1;
    f.bestThreshold = c.bestThreshold;
    f.roc = c.roc;
    f.pr = c.pr;
    tpAll += f.correct;
    fpAll += fp;
    fnAll += fn;
    f1Sum += f.f1;
    if (!std::isnan(c.averagePrecision)) {
      apSum += c.averagePrecision;
      ++apLabels;
    }
  }
  for (uint8_t right : rowRight) exact += right;
  const int64_t micro = 2 * tpAll + fpAll + fnAll;
  r.microF1 = micro > 0 ? 2.0 * static_cast<double>(tpAll) / static_cast<double>(micro) : 0.0;
  r.macroF1 = labels > 0 ? f1Sum / static_cast<double>(labels) : kNaN;
  r.map = apLabels > 0 ? apSum / static_cast<double>(apLabels) : kNaN;
  r.accuracy = n > 0 ? static_cast<double>(exact) / static_cast<double>(n) : kNaN;
}

}  // namespace studio
