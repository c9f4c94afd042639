#pragma once
// The learning-rate range test in the window (Run > Find learning rate…):
// its bounds and steps, then the loss against the learning rate on a log axis
// as the sweep runs (raw, and smoothed as the engine smooths it: fastai's
// bias-corrected moving average, beta 0.98), and at the end the suggested
// rate marked, with a button that writes it into the settings (OneCycle's
// max_lr when the schedule is OneCycle, otherwise optimizer.lr).
// Thread: UI thread.

#include <QDialog>

#include "studio/session.h"
#include "ui/charts/loss_smoother.h"

class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace studio::ui {

class LrFindDialog : public QDialog {
  Q_OBJECT
 public:
  explicit LrFindDialog(QWidget* parent = nullptr);

  LrFindOptions options() const;
  void setOptions(const LrFindOptions& o);
  // Where an accepted rate goes: "optimizer.lr" or "schedule.onecycle.max_lr".
  void setTarget(const QString& settingPath);
  QString target() const { return m_target; }

  // A sweep started (the plot clears), its steps, its end.
  void begin(const QString& runDir);
  void addRecords(const std::vector<MetricRecord>& records);
  void finish(const RunSummary& summary);

  int points() const;
  double suggestion() const { return m_suggestion; }
  QPushButton* startButton() const { return m_start; }
  QPushButton* useButton() const { return m_use; }
  QCustomPlot* plot() const { return m_plot; }
  QString status() const;

 Q_SIGNALS:
  void startRequested(const studio::LrFindOptions& options);
  // The person accepted the suggestion: write value into settingPath.
  void useRequested(const QString& settingPath, const QString& value);

 private:
  QDoubleSpinBox* m_min;
  QDoubleSpinBox* m_max;
  QSpinBox* m_steps;
  QPushButton* m_start;
  QPushButton* m_use;
  QLabel* m_status;
  QCustomPlot* m_plot;
  LossSmoother m_smoother{0.98};
  QString m_target = "optimizer.lr";
  double m_suggestion = MetricRecord::kNone;
};

}  // namespace studio::ui
