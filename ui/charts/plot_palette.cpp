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

QColor runColour(int i) {
  static const QColor kColours[] = {QColor(0, 114, 178),   QColor(213, 94, 0),   QColor(0, 158, 115),
                                    QColor(204, 121, 167), QColor(230, 159, 0),  QColor(86, 180, 233),
                                    QColor(240, 228, 66),  QColor(128, 128, 128)};
  return kColours[((i % 8) + 8) % 8];
}

}  // namespace studio::ui
