#include "ui/charts/loss_smoother.h"

#include <cmath>

namespace studio::ui {

double LossSmoother::add(double y) {
  if (!std::isfinite(y)) return m_debias < 1 ? m_ema / (1 - m_debias) : y;
  m_ema = m_weight * m_ema + (1 - m_weight) * y;
  m_debias *= m_weight;
  // weight 0: no smoothing, and w^t is 0 from the first step.
  return m_ema / (1 - m_debias);
}

}  // namespace studio::ui
