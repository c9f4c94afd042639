#pragma once
// The Evaluation tab's page for several runs of one task kind: each
// class's (label's, target's) figure from each run's last evaluation, and
// one figure for the whole run. A classifier's recall per class and its
// accuracy; a regression's R² per target and their mean; a multi-label's
// average precision per label and mAP; a detector's AP@[.50:.95] per class
// and COCO's mAP. Runs of different kinds are not compared (issue 60: a
// detector's report read as a classifier's crashed the window).
// Thread: the UI thread (comparedFigures: any thread).

#include <QString>
#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

#include "studio/eval_report.h"

class QCPTextElement;
class QCustomPlot;
class QTableWidget;

namespace studio::ui {

struct ComparedFigures {
  QString title;    // the chart's
  QString axis;     // the figure's name on the y axis
  QString overall;  // the table's last row
  bool percent = false;
  std::vector<std::string> names;  // classes, labels or targets
  std::vector<double> values;      // one per name (NaN: none)
  double overallValue = 0;
};

ComparedFigures comparedFigures(const EvalReport& report);

class ComparisonView : public QWidget {
  Q_OBJECT

 public:
  explicit ComparisonView(QWidget* parent = nullptr);
  // Reads each run's last evaluation and draws them; returns what the tab
  // says: how many were compared, and those without an evaluation or of
  // another kind than the first run's.
  QString compare(const QStringList& runDirs, const QStringList& labels);
  QTableWidget* table() const { return m_table; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QCustomPlot* m_plot;
  QCPTextElement* m_title;
  QTableWidget* m_table;
};

}  // namespace studio::ui
