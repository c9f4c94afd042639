#include "studio/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace studio {

Reliability reliabilityOf(const std::vector<float>& confidence, const std::vector<uint8_t>& correct, int bins) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Reliability r;
  const auto b = static_cast<size_t>(std::max(bins, 1));
  r.count.assign(b, 0);
  std::vector<double> conf(b, 0.0), right(b, 0.0);
  const size_t n = std::min(confidence.size(), correct.size());
  for (size_t i = 0; i < n; ++i) {
    const double c = confidence[i];
    // (k/B, (k+1)/B]: ceil(c * B) - 1, and 0 for a confidence of 0.
    const auto k = static_cast<size_t>(
        std::clamp<double>(std::ceil(c * static_cast<double>(b)) - 1, 0.0, static_cast<double>(b - 1)));
    ++r.count[k];
    conf[k] += c;
    right[k] += correct[i] ? 1.0 : 0.0;
  }
  r.confidence.assign(b, kNaN);
  r.accuracy.assign(b, kNaN);
  r.ece = n > 0 ? 0.0 : kNaN;
  for (size_t k = 0; k < b; ++k) {
    if (r.count[k] == 0) continue;
    const auto m = static_cast<double>(r.count[k]);
    r.confidence[k] = conf[k] / m;
    r.accuracy[k] = right[k] / m;
    r.ece += m / static_cast<double>(n) * std::fabs(r.accuracy[k] - r.confidence[k]);
  }
  return r;
}

}  // namespace studio
