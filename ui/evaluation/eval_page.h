#pragma once
// The Evaluation tab's pages for a task beyond single-label classification
// (ui/evaluation/regression_view.h, ui/evaluation/labels_view.h): a chooser of what to plot (a
// target, a label), two plots side by side, and a table of figures below,
// themed with the window's palette.
// Thread: the UI thread.

#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

class QComboBox;
class QCustomPlot;
class QTableWidget;

namespace studio::ui {

// A figure to three decimals, or a dash where there is none (NaN).
QString threeDecimals(double v);

class EvalPage : public QWidget {
  Q_OBJECT

 protected:
  // chooser: its label and object name; plots: their object names.
  EvalPage(const QString& chooserLabel, const char* chooserName, const char* leftPlot, const char* rightPlot,
           const QStringList& tableHeaders, const char* tableName, QWidget* parent = nullptr);
  void changeEvent(QEvent* event) override;
  // Draws the chosen entry's plots (called when the choice changes).
  virtual void draw() = 0;
  // The chooser's entries, keeping the chosen position (without drawing).
  void setChoices(const std::vector<std::string>& names);
  // One row of the table: the first cell as text, the others right-aligned.
  void setRow(int row, const QStringList& cells);
  // A plot's title (row 0 of its layout).
  static void setTitle(QCustomPlot* plot, const QString& title);

  QComboBox* m_chooser;
  QCustomPlot* m_left;
  QCustomPlot* m_right;
  QTableWidget* m_table;
};

}  // namespace studio::ui
