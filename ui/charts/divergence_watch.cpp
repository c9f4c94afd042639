#include "ui/charts/divergence_watch.h"

#include <QCoreApplication>

#include <cmath>

namespace studio::ui {

namespace {
QString tr(const char* text) { return QCoreApplication::translate("DivergenceWatch", text); }
}  // namespace

std::optional<DivergenceWatch::Warning> DivergenceWatch::observe(const MetricRecord& r) {
  if (r.kind == RecordKind::NonFinite) {
    if (m_warnedNonFinite) return std::nullopt;
    m_warnedNonFinite = true;
    return Warning{r.step, tr("not finite"),
                   tr("The training loss turned NaN or infinite at step %1; train.on_nonfinite decides what the run "
                      "does (skip the step, roll back to the last checkpoint, or stop). A lower %2, "
                      "train.grad_clip_norm, or precision.mode bf16 instead of fp16 usually keeps it finite.")
                       .arg(r.step)
                       .arg(m_rate)};
  }
  if (r.kind != RecordKind::Train || !std::isfinite(r.trainLoss)) return std::nullopt;
  const double s = m_smooth.add(r.trainLoss);
  ++m_seen;
  if (m_seen == 1) m_first = s;
  if (s < m_lowest) {
    m_lowest = s;
    m_lowestStep = r.step;
  }
  if (m_warnedRise || m_seen < kSettleRecords) return std::nullopt;
  const bool doubled = s > 2 * m_lowest;
  const bool climbedBack = s > m_lowest + 0.5 * (m_first - m_lowest);
  if (!doubled || !climbedBack) return std::nullopt;
  m_warnedRise = true;
  return Warning{r.step, tr("diverging?"),
                 tr("The training loss is climbing: smoothed, %1 at step %2, over twice its lowest (%3 at step %4). "
                    "The run may be diverging; a lower %5 or train.grad_clip_norm usually helps.")
                     .arg(s, 0, 'g', 4)
                     .arg(r.step)
                     .arg(m_lowest, 0, 'g', 4)
                     .arg(m_lowestStep)
                     .arg(m_rate)};
}

}  // namespace studio::ui
