#include "ui/evaluation/calibration_view.h"

#include <QEvent>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>

#include "ui/charts/plot_palette.h"

namespace studio::ui {

CalibrationView::CalibrationView(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(0, 0, 0, 0);
  m_plot->setObjectName("reliabilityDiagram");
  m_plot->setMinimumSize(200, 220);  // readable at 1280x720: the Evaluation tab scrolls, the window still fits
  m_plot->plotLayout()->insertRow(0);
  m_plot->plotLayout()->addElement(
      0, 0, new QCPTextElement(m_plot, tr("Reliability"), QFont(font().family(), font().pointSize(), QFont::Bold)));
  m_plot->xAxis->setLabel(tr("confidence (the top class's probability)"));
  m_plot->yAxis->setLabel(tr("accuracy"));
  m_plot->xAxis->setRange(0, 1);
  m_plot->yAxis->setRange(0, 1.02);
  top->addWidget(m_plot);
  applyPlotPalette(m_plot, palette());
}

void CalibrationView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_plot, palette());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

void CalibrationView::show(const Reliability& r) {
  m_plot->clearPlottables();
  const auto bins = static_cast<double>(std::max<size_t>(r.count.size(), 1));
  QVector<double> x, y;
  for (size_t k = 0; k < r.count.size(); ++k)
    if (r.count[k] > 0) {
      x << (static_cast<double>(k) + 0.5) / bins;
      y << r.accuracy[k];
    }
  auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
  bars->setData(x, y, true);
  bars->setWidth(0.9 / bins);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(0, 114, 178));
  auto* perfect = m_plot->addGraph();
  perfect->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
  perfect->setData({0, 1}, {0, 1});
  if (auto* t = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0)))
    t->setText(std::isfinite(r.ece) ? tr("Reliability: expected calibration error %1").arg(r.ece, 0, 'f', 4)
                                    : tr("Reliability"));
  m_plot->replot();
}

int CalibrationView::barsDrawn() const {
  auto* bars = m_plot->plottableCount() > 0 ? qobject_cast<QCPBars*>(m_plot->plottable(0)) : nullptr;
  return bars ? bars->dataCount() : 0;
}

}  // namespace studio::ui
