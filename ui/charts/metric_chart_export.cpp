// MetricChart's pictures: its context menu's Save as PNG/PDF, and the
// files an export writes (a caption under the axes; what was drawn is kept
// for the tests: savedTitle, savedLegend).
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include <algorithm>

#include <qcustomplot.h>

#include "ui/charts/chart_legend.h"
#include "ui/charts/metric_chart.h"

namespace studio::ui {

void MetricChart::showContextMenu(const QPoint& pos) {
  QMenu menu(this);
  QAction* log = menu.addAction(tr("Log scale"));
  log->setCheckable(true);
  log->setChecked(m_logScale);
  connect(log, &QAction::toggled, this, &MetricChart::setLogScale);
  QMenu* smoothing = menu.addMenu(tr("Smoothing"));
  for (double w : smoothingChoices()) {
    QAction* a = smoothing->addAction(w > 0 ? QString::number(w) : tr("off"));
    a->setCheckable(true);
    a->setChecked(w == m_smoothing);
    connect(a, &QAction::triggered, this, [this, w] { Q_EMIT smoothingRequested(w); });
  }
  menu.addAction(tr("Reset view"), this, &MetricChart::resetView);
  menu.addSeparator();
  menu.addAction(tr("Save as PNG…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plot"), m_title + ".png", "PNG (*.png)");
    if (!path.isEmpty()) saveAsShown(path);
  });
  menu.addAction(tr("Save as PDF…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plot"), m_title + ".pdf", "PDF (*.pdf)");
    if (!path.isEmpty()) saveAsShown(path);
  });
  menu.exec(m_plot->mapToGlobal(pos));
}

template <class Save>
bool MetricChart::saveWith(const QString& path, const QString& caption, Save save) {
  // Only a file of its own: never through a link, over a device, or into a
  // FIFO (opening one for writing would wait for a reader).
  const QFileInfo target(path);
  if (target.isSymLink() || (target.exists() && !target.isFile())) return false;
  hideCrosshair();  // the mouse's read-out is not part of the picture
  updateGraphs(m_follow);
  QCPTextElement* under = nullptr;
  QCPLayoutGrid* grid = m_plot->plotLayout();
  if (!caption.isEmpty()) {
    grid->insertRow(grid->rowCount());
    QFont small = font();
    small.setPointSizeF(std::max(6.0, font().pointSizeF() - 1));
    under = new QCPTextElement(m_plot, caption, small);
    under->setTextColor(palette().color(QPalette::WindowText));
    grid->addElement(grid->rowCount() - 1, 0, under);
  }
  const bool ok = save();
  m_savedCaption = caption;
  m_savedTitle = m_title;
  m_savedLegend.clear();
  for (int i = 0; i < m_plot->legend->itemCount(); ++i) m_savedLegend << legendText(m_plot->legend->item(i));
  if (under) {
    grid->remove(under);
    grid->simplify();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
  return ok;
}

bool MetricChart::saveAsShown(const QString& path) {
  QSize size;
  QString caption;
  if (m_saveLook) m_saveLook(size, caption);
  return path.endsWith(".pdf", Qt::CaseInsensitive) ? savePdf(path, size.width(), size.height(), caption)
                                                    : savePng(path, size.width(), size.height(), caption);
}

bool MetricChart::savePng(const QString& path, int w, int h, const QString& caption) {
  return saveWith(path, caption, [&] { return m_plot->savePng(path, w, h); });
}

bool MetricChart::savePdf(const QString& path, int w, int h, const QString& caption) {
  return saveWith(path, caption, [&] { return m_plot->savePdf(path, w, h); });
}

}  // namespace studio::ui
