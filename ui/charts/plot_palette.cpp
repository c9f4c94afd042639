#include "ui/charts/plot_palette.h"

#include <qcustomplot.h>

namespace studio::ui {

void applyPlotPalette(QCustomPlot* plot, const QPalette& p) {
  const QColor text = p.color(QPalette::WindowText);
  QColor grid = p.color(QPalette::Mid);
  grid.setAlpha(110);
  plot->setBackground(p.brush(QPalette::Base));
  for (QCPAxisRect* rect : plot->axisRects())
    for (QCPAxis* axis : rect->axes()) {
      axis->setBasePen(QPen(text));
      axis->setTickPen(QPen(text));
      axis->setSubTickPen(QPen(text));
      axis->setLabelColor(text);
      axis->setTickLabelColor(text);
      axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
  plot->legend->setBrush(p.brush(QPalette::Base));
  plot->legend->setTextColor(text);
  plot->legend->setBorderPen(QPen(grid));
  if (plot->plotLayout()->elementCount() > 0)
    if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) t->setTextColor(text);
}

void placeLegendBelow(QCustomPlot* plot) {
  QCPLegend* legend = plot->legend;
  legend->setVisible(true);
  plot->axisRect()->insetLayout()->take(legend);
  auto* row = new QCPLayoutGrid;
  const int at = plot->plotLayout()->rowCount();
  plot->plotLayout()->insertRow(at);
  plot->plotLayout()->addElement(at, 0, row);
  row->addElement(0, 0, legend);
  row->setMargins(QMargins(0, 0, 0, 4));
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->plotLayout()->setRowStretchFactor(at, 0.001);
}

}  // namespace studio::ui
