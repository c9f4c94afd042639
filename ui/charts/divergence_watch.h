#pragma once
// Watches one run's training loss for what a person watching the curve would
// call divergence, and says it once: a loss that turned NaN or infinite (the
// engine's non-finite record), or a lightly smoothed loss that climbed back to
// more than twice its lowest value and more than halfway from its lowest back
// to where it started (so a loss near zero does not warn on noise, and one
// that never fell warns when it doubles). The smoothing is light and the
// records are counted, not the steps, so a jump is said within a record or two
// of it however far apart the records are (train.log_every_steps), even when
// the loss recovers after. The advice names the setting that sets the rate
// under the run's schedule (schedule.onecycle.max_lr under OneCycle).
// Thread: plain data, the UI thread.

#include <QString>

#include <cstdint>
#include <limits>
#include <optional>

#include "studio/metric_record.h"
#include "ui/charts/loss_smoother.h"

namespace studio::ui {

class DivergenceWatch {
 public:
  struct Warning {
    int64_t step = 0;
    QString marker;  // a few words for the chart
    QString text;    // the message: what happened, and what usually helps
  };
  // Records of training loss seen before a rise can warn.
  static constexpr int64_t kSettleRecords = 2;

  // The setting that sets the run's learning rate (learningRateSetting()).
  void setRateSetting(const QString& path) { m_rate = path; }

  // The warning this record raises, if any: at most one of each kind per run.
  std::optional<Warning> observe(const MetricRecord& r);

 private:
  LossSmoother m_smooth{0.5};
  QString m_rate = QStringLiteral("optimizer.lr");
  int64_t m_seen = 0;
  double m_first = std::numeric_limits<double>::quiet_NaN();
  double m_lowest = std::numeric_limits<double>::infinity();
  int64_t m_lowestStep = 0;
  bool m_warnedRise = false;
  bool m_warnedNonFinite = false;
};

}  // namespace studio::ui
