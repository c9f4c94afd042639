#pragma once
// A regression's evaluation in the Evaluation tab: for the chosen target,
// predicted against actual (a dot per example, the identity line for a
// perfect model) and the residuals' histogram (predicted - actual), beside
// each target's RMSE, MAE and R² (eval/step-<N>.json, in the data's units).
// Thread: the UI thread.

#include "studio/eval_report.h"
#include "ui/evaluation/eval_page.h"

namespace studio::ui {

class RegressionView : public EvalPage {
  Q_OBJECT

 public:
  explicit RegressionView(QWidget* parent = nullptr);
  void show(const EvalReport& report);
  void clear();

  QComboBox* targetChooser() const { return m_chooser; }
  QTableWidget* targetTable() const { return m_table; }
  // What is drawn for the chosen target: the dots, and the histogram's counts.
  int pointsDrawn() const;
  std::vector<double> residualCounts() const;

 private:
  void draw() override;

  EvalReport m_report;
};

// The residuals' histogram: `bins` equal bins from the smallest residual to
// the largest, the counts in each (one bin when they are all equal).
struct Histogram {
  double from = 0, width = 1;
  std::vector<double> counts;
};
Histogram residualHistogram(const std::vector<double>& residuals, int bins);

}  // namespace studio::ui
