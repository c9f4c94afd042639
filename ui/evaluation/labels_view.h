#pragma once
// A multi-label evaluation in the Evaluation tab: for the chosen label, its
// precision-recall curve (with the average precision) and its ROC curve
// (with the area under it), beside every label's support, precision,
// recall, F1 at the threshold, average precision, ROC AUC and the threshold
// of its best F1 (eval/step-<N>.json).
// Thread: the UI thread.

#include "studio/eval_report.h"
#include "ui/evaluation/eval_page.h"

namespace studio::ui {

class LabelsView : public EvalPage {
  Q_OBJECT

 public:
  // classes: a single-label classifier's classes, one-vs-rest (their
  // figures at its top-class decision; no threshold), not labels.
  explicit LabelsView(bool classes = false, QWidget* parent = nullptr);
  void show(const EvalReport& report);
  void clear();

  QComboBox* labelChooser() const { return m_chooser; }
  QTableWidget* labelTable() const { return m_table; }
  // The chosen label's curves as drawn: points of its PR and ROC curves.
  int prPointsDrawn() const;
  int rocPointsDrawn() const;

 private:
  void draw() override;

  EvalReport m_report;
};

}  // namespace studio::ui
