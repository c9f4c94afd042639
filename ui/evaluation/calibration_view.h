#pragma once
// A classifier's reliability diagram (Evaluation tab): each confidence
// bin's accuracy as a bar at its mean confidence, the identity line of a
// perfectly calibrated model, and the expected calibration error in the
// title (studio/calibration.h).
// Thread: the UI thread.

#include <QWidget>

#include "studio/calibration.h"

class QCustomPlot;

namespace studio::ui {

class CalibrationView : public QWidget {
  Q_OBJECT

 public:
  explicit CalibrationView(QWidget* parent = nullptr);
  void show(const Reliability& reliability);
  // The bars drawn (bins with examples).
  int barsDrawn() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QCustomPlot* m_plot;
};

}  // namespace studio::ui
