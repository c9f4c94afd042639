#pragma once
// A segmenter's evaluation in the Evaluation tab (task.kind segmentation):
// each class's IoU as bars (the chosen class marked), where the chosen
// class's pixels went (its row of the pixels' confusion matrix, as shares
// of its pixels), and a table of each class's IoU, Dice, accuracy and share
// of the pixels (eval/step-<N>.json).
// Thread: the UI thread.

#include "studio/eval_report.h"
#include "ui/evaluation/eval_page.h"

namespace studio::ui {

class SegmentationView : public EvalPage {
  Q_OBJECT

 public:
  explicit SegmentationView(QWidget* parent = nullptr);
  void show(const EvalReport& report);
  void clear();

  QComboBox* classChooser() const { return m_chooser; }
  QTableWidget* classTable() const { return m_table; }
  // What is drawn, in the classes' order: each class's IoU bar, and the
  // chosen class's pixels' shares predicted as each class.
  std::vector<double> barsDrawn() const;
  std::vector<double> rowDrawn() const;

 private:
  void draw() override;

  EvalReport m_report;
};

}  // namespace studio::ui
