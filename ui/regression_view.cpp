#include "ui/regression_view.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/plot_palette.h"

namespace studio::ui {
namespace {

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'g', 4) : QStringLiteral("—"); }

QCustomPlot* titledPlot(const QString& title, const char* name, const QFont& font) {
  auto* p = new QCustomPlot;
  p->setObjectName(name);
  p->setMinimumSize(200, 140);  // the window fits a 1280x720 screen
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, title, QFont(font.family(), font.pointSize(), QFont::Bold)));
  return p;
}

}  // namespace

Histogram residualHistogram(const std::vector<double>& residuals, int bins) {
  Histogram h;
  if (residuals.empty() || bins < 1) return h;
  const auto [lo, hi] = std::minmax_element(residuals.begin(), residuals.end());
  h.from = *lo;
  if (!(*hi > *lo)) {
    h.width = 1;
    h.from = *lo - 0.5;
    h.counts = {static_cast<double>(residuals.size())};
    return h;
  }
  h.width = (*hi - *lo) / bins;
  h.counts.assign(static_cast<size_t>(bins), 0.0);
  for (double r : residuals) {
    const auto b = std::min<int64_t>(bins - 1, static_cast<int64_t>((r - h.from) / h.width));
    ++h.counts[static_cast<size_t>(std::max<int64_t>(0, b))];
  }
  return h;
}

RegressionView::RegressionView(QWidget* parent) : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Target:")));
  m_target = new QComboBox;
  m_target->setObjectName("regressionTarget");
  m_target->setToolTip(tr("Which target column the plots show."));
  bar->addWidget(m_target);
  bar->addStretch(1);
  top->addLayout(bar);
  auto* split = new QSplitter(Qt::Vertical);
  auto* plots = new QSplitter(Qt::Horizontal);
  m_scatter = titledPlot(tr("Predicted against actual"), "predictedAgainstActual", font());
  m_scatter->xAxis->setLabel(tr("actual"));
  m_scatter->yAxis->setLabel(tr("predicted"));
  m_residuals = titledPlot(tr("Residuals (predicted \u2212 actual)"), "residualHistogram", font());
  m_residuals->xAxis->setLabel(tr("residual"));
  m_residuals->yAxis->setLabel(tr("examples"));
  plots->addWidget(m_scatter);
  plots->addWidget(m_residuals);
  split->addWidget(plots);
  m_table = new QTableWidget(0, 6);
  m_table->setObjectName("targetFigures");
  m_table->setHorizontalHeaderLabels({tr("Target"), tr("RMSE"), tr("MAE"), tr("R\u00b2"), tr("Mean"), tr("Std")});
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setMinimumHeight(60);
  split->addWidget(m_table);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  top->addWidget(split, 1);
  connect(m_target, &QComboBox::currentIndexChanged, this, [this] { draw(); });
  applyPlotPalette(m_scatter, palette());
  applyPlotPalette(m_residuals, palette());
}

void RegressionView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_scatter, palette());
    applyPlotPalette(m_residuals, palette());
    m_scatter->replot(QCustomPlot::rpQueuedReplot);
    m_residuals->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

void RegressionView::clear() {
  m_report = EvalReport{};
  m_target->clear();
  m_table->setRowCount(0);
  m_scatter->clearPlottables();
  m_residuals->clearPlottables();
  m_scatter->replot();
  m_residuals->replot();
}

void RegressionView::show(const EvalReport& report) {
  const int keep = m_target->currentIndex();
  m_report = report;
  {
    const QSignalBlocker quiet(m_target);
    m_target->clear();
    for (const auto& t : report.targets) m_target->addItem(QString::fromStdString(t.name));
    m_target->setCurrentIndex(keep >= 0 && keep < m_target->count() ? keep : 0);
  }
  m_table->setRowCount(static_cast<int>(report.targets.size()));
  for (size_t i = 0; i < report.targets.size(); ++i) {
    const TargetFigures& f = report.targets[i];
    const QString cells[] = {QString::fromStdString(f.name), number(f.rmse), number(f.mae),
                             number(f.r2),                   number(f.mean), number(f.std)};
    for (int c = 0; c < 6; ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      m_table->setItem(static_cast<int>(i), c, item);
    }
  }
  draw();
}

int RegressionView::pointsDrawn() const {
  auto* g = m_scatter->graphCount() > 0 ? m_scatter->graph(0) : nullptr;
  return g ? g->dataCount() : 0;
}

std::vector<double> RegressionView::residualCounts() const {
  std::vector<double> out;
  if (m_residuals->plottableCount() == 0) return out;
  if (auto* bars = qobject_cast<QCPBars*>(m_residuals->plottable(0)))
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) out.push_back(it->value);
  return out;
}

void RegressionView::draw() {
  m_scatter->clearPlottables();
  m_residuals->clearPlottables();
  const int t = m_target->currentIndex();
  if (t < 0 || static_cast<size_t>(t) >= m_report.targets.size()) {
    m_scatter->replot();
    m_residuals->replot();
    return;
  }
  QVector<double> x, y;
  std::vector<double> residuals;
  for (size_t i = 0; i < m_report.actual.size(); ++i) {
    const double a = m_report.actual[i][static_cast<size_t>(t)], p = m_report.predicted[i][static_cast<size_t>(t)];
    x << a;
    y << p;
    residuals.push_back(p - a);
  }
  const QColor dots = QColor(0, 114, 178);
  auto* points = m_scatter->addGraph();
  points->setLineStyle(QCPGraph::lsNone);
  points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dots, dots, 4));
  points->setData(x, y, /*alreadySorted=*/false);
  double lo = 0, hi = 1;
  if (!x.isEmpty()) {
    lo = std::min(*std::min_element(x.begin(), x.end()), *std::min_element(y.begin(), y.end()));
    hi = std::max(*std::max_element(x.begin(), x.end()), *std::max_element(y.begin(), y.end()));
    if (!(hi > lo)) hi = lo + 1;
  }
  auto* identity = m_scatter->addGraph();
  identity->setName(tr("perfect"));
  identity->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
  identity->setData({lo, hi}, {lo, hi});
  const double pad = 0.04 * (hi - lo);
  m_scatter->xAxis->setRange(lo - pad, hi + pad);
  m_scatter->yAxis->setRange(lo - pad, hi + pad);

  const Histogram h = residualHistogram(residuals, 30);
  auto* bars = new QCPBars(m_residuals->xAxis, m_residuals->yAxis);
  QVector<double> centres, counts;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    centres << h.from + (static_cast<double>(b) + 0.5) * h.width;
    counts << h.counts[b];
  }
  bars->setData(centres, counts, true);
  bars->setWidth(h.width);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(213, 94, 0));
  m_residuals->rescaleAxes();
  m_residuals->yAxis->setRangeLower(0);
  m_scatter->replot();
  m_residuals->replot();
}

}  // namespace studio::ui
