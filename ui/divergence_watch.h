#pragma once
// Watches one run's training loss for what a person watching the curve would
// call divergence, and says it once: a loss that turned NaN or infinite (the
// engine's non-finite record), or a smoothed loss that climbed back to more
// than twice its lowest value and more than halfway from its lowest back to
// where it started (so a loss near zero does not warn on noise, and one that
// never fell warns when it doubles).
// Thread: plain data, the UI thread.

#include <QString>

#include <cstdint>
#include <limits>
#include <optional>

#include "studio/metric_record.h"
#include "ui/loss_smoother.h"

namespace studio::ui {

class DivergenceWatch {
 public:
  struct Warning {
    int64_t step = 0;
    QString marker;  // a few words for the chart
    QString text;    // the message: what happened, and what usually helps
  };
  // Steps of training loss seen before a rise can warn (the first steps'
  // loss moves fast either way).
  static constexpr int64_t kSettleSteps = 20;

  // The warning this record raises, if any: at most one of each kind per run.
  std::optional<Warning> observe(const MetricRecord& r);

 private:
  LossSmoother m_smooth{0.9};
  int64_t m_seen = 0;
  double m_first = std::numeric_limits<double>::quiet_NaN();
  double m_lowest = std::numeric_limits<double>::infinity();
  int64_t m_lowestStep = 0;
  bool m_warnedRise = false;
  bool m_warnedNonFinite = false;
};

}  // namespace studio::ui
