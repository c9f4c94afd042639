#pragma once
// A detector's evaluation in the Evaluation tab (task.kind detection): each
// class's AP@[.50:.95] as bars (the chosen class marked), the chosen class's
// precision-recall curve at IoU 0.5 (COCO's precision at recall 0, 0.01, ..,
// 1), and a table of each class's AP, AP50 and the recall it reaches
// (eval/step-<N>.json).
// Thread: the UI thread.

#include "studio/eval_report.h"
#include "ui/evaluation/eval_page.h"

namespace studio::ui {

class DetectionView : public EvalPage {
  Q_OBJECT

 public:
  explicit DetectionView(QWidget* parent = nullptr);
  void show(const EvalReport& report);
  void clear();

  QComboBox* classChooser() const { return m_chooser; }
  QTableWidget* classTable() const { return m_table; }
  // What is drawn: each class's bar (in the classes' order), the chosen class's curve's points.
  std::vector<double> barsDrawn() const;
  std::vector<std::pair<double, double>> curveDrawn() const;

 private:
  void draw() override;

  EvalReport m_report;
};

// A class's AP50 from its curve (the mean of its 101 precisions, as
// COCOeval averages them), and the highest recall where its precision is
// above 0. NaN for a class without a curve.
double ap50Of(const std::vector<double>& precision50);
double recallReached(const std::vector<double>& precision50);

}  // namespace studio::ui
