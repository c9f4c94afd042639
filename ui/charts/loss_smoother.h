#pragma once
// Exponential moving average with bias correction, as TensorBoard smooths its
// scalars: s_t = w*s_{t-1} + (1-w)*x_t, shown as s_t / (1 - w^t), so the first
// points are not pulled toward zero. Non-finite samples are passed over.
// Thread: plain data, the UI thread.

namespace studio::ui {

class LossSmoother {
 public:
  explicit LossSmoother(double weight = 0.6) : m_weight(weight) {}
  double weight() const { return m_weight; }
  // The smoothed value after adding y.
  double add(double y);
  void reset() {
    m_ema = 0;
    m_debias = 1;
  }

 private:
  double m_weight;
  double m_ema = 0;
  double m_debias = 1;  // w^t
};

}  // namespace studio::ui
