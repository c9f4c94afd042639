#pragma once
// A regression's evaluation in the Evaluation tab: for the chosen target,
// predicted against actual (a dot per example, the identity line for a
// perfect model) and the residuals' histogram (predicted - actual), beside
// each target's RMSE, MAE and R² (eval/step-<N>.json, in the data's units).
// Thread: the UI thread.

#include <QWidget>

#include "studio/eval_report.h"

class QComboBox;
class QCustomPlot;
class QTableWidget;

namespace studio::ui {

class RegressionView : public QWidget {
  Q_OBJECT

 public:
  explicit RegressionView(QWidget* parent = nullptr);
  void show(const EvalReport& report);
  void clear();

  QComboBox* targetChooser() const { return m_target; }
  QTableWidget* targetTable() const { return m_table; }
  // What is drawn for the chosen target: the dots, and the histogram's counts.
  int pointsDrawn() const;
  std::vector<double> residualCounts() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void draw();

  EvalReport m_report;
  QComboBox* m_target;
  QCustomPlot* m_scatter;
  QCustomPlot* m_residuals;
  QTableWidget* m_table;
};

// The residuals' histogram: `bins` equal bins from the smallest residual to
// the largest, the counts in each (one bin when they are all equal).
struct Histogram {
  double from = 0, width = 1;
  std::vector<double> counts;
};
Histogram residualHistogram(const std::vector<double>& residuals, int bins);

}  // namespace studio::ui
