#include "ui/evaluation/labels_view.h"

#include <QComboBox>
#include <QTableWidget>

#include <qcustomplot.h>

#include <cmath>

namespace studio::ui {
namespace {

void plotCurve(QCustomPlot* p, const std::vector<std::pair<double, double>>& points, const QPen& pen) {
  QVector<double> x, y;
  for (const auto& [a, b] : points) {
    x << a;
    y << b;
  }
  auto* curve = new QCPCurve(p->xAxis, p->yAxis);  // parametric: recall may repeat
  curve->setData(x, y);
  curve->setPen(pen);
}

int curvePoints(QCustomPlot* p) {
  auto* c = p->plottableCount() > 0 ? qobject_cast<QCPCurve*>(p->plottable(0)) : nullptr;
  return c ? c->dataCount() : 0;
}

}  // namespace

LabelsView::LabelsView(bool classes, QWidget* parent)
    : EvalPage(classes ? tr("Class (one vs rest):") : tr("Label:"), classes ? "curveClass" : "multilabelLabel",
               "precisionRecallCurve", "rocCurve",
               {classes ? tr("Class") : tr("Label"), tr("Examples"), tr("Precision"), tr("Recall"), tr("F1"),
                tr("Average precision"), tr("ROC AUC"), tr("Threshold"), tr("Best-F1 threshold")},
               classes ? "classCurveFigures" : "labelFigures", parent) {
  m_left->xAxis->setLabel(tr("recall"));
  m_left->yAxis->setLabel(tr("precision"));
  m_right->xAxis->setLabel(tr("false positive rate"));
  m_right->yAxis->setLabel(tr("true positive rate"));
  for (QCustomPlot* p : {m_left, m_right}) {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1.02);
  }
}

void LabelsView::clear() {
  m_report = EvalReport{};
  m_chooser->clear();
  m_table->setRowCount(0);
  draw();
}

void LabelsView::show(const EvalReport& report) {
  m_report = report;
  std::vector<std::string> names;
  for (const auto& l : report.labels) names.push_back(l.name);
  setChoices(names);
  m_table->setRowCount(static_cast<int>(report.labels.size()));
  for (size_t i = 0; i < report.labels.size(); ++i) {
    const LabelFigures& f = report.labels[i];
    setRow(static_cast<int>(i), {QString::fromStdString(f.name), QString::number(f.support), threeDecimals(f.precision),
                                 threeDecimals(f.recall), threeDecimals(f.f1), threeDecimals(f.averagePrecision),
                                 threeDecimals(f.rocAuc), threeDecimals(f.threshold), threeDecimals(f.bestThreshold)});
  }
  draw();
}

int LabelsView::prPointsDrawn() const { return curvePoints(m_left); }
int LabelsView::rocPointsDrawn() const { return curvePoints(m_right); }

void LabelsView::draw() {
  m_left->clearPlottables();
  m_right->clearPlottables();
  const int k = m_chooser->currentIndex();
  if (k >= 0 && static_cast<size_t>(k) < m_report.labels.size()) {
    const LabelFigures& f = m_report.labels[static_cast<size_t>(k)];
    plotCurve(m_left, f.pr, QPen(QColor(0, 114, 178), 1));
    plotCurve(m_right, f.roc, QPen(QColor(213, 94, 0), 1));
    plotCurve(m_right, {{0, 0}, {1, 1}}, QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));  // chance
    setTitle(m_left, tr("Precision-recall: average precision %1").arg(threeDecimals(f.averagePrecision)));
    setTitle(m_right, tr("ROC: area %1").arg(threeDecimals(f.rocAuc)));
  } else {
    setTitle(m_left, tr("Precision-recall"));
    setTitle(m_right, tr("ROC"));
  }
  m_left->replot();
  m_right->replot();
}

}  // namespace studio::ui
