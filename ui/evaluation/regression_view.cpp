#include "ui/evaluation/regression_view.h"

#include <QComboBox>
#include <QTableWidget>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace studio::ui {
namespace {

QString fourDigits(double v) { return std::isfinite(v) ? QString::number(v, 'g', 4) : QStringLiteral("—"); }

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

RegressionView::RegressionView(QWidget* parent)
    : EvalPage(tr("Target:"), "regressionTarget", "predictedAgainstActual", "residualHistogram",
               {tr("Target"), tr("RMSE"), tr("MAE"), tr("R\u00b2"), tr("Mean"), tr("Std")}, "targetFigures", parent) {
  setTitle(m_left, tr("Predicted against actual"));
  m_left->xAxis->setLabel(tr("actual"));
  m_left->yAxis->setLabel(tr("predicted"));
  setTitle(m_right, tr("Residuals (predicted \u2212 actual)"));
  m_right->xAxis->setLabel(tr("residual"));
  m_right->yAxis->setLabel(tr("examples"));
}

void RegressionView::clear() {
  m_report = EvalReport{};
  m_chooser->clear();
  m_table->setRowCount(0);
  draw();
}

void RegressionView::show(const EvalReport& report) {
  m_report = report;
  std::vector<std::string> names;
  for (const auto& t : report.targets) names.push_back(t.name);
  setChoices(names);
  m_table->setRowCount(static_cast<int>(report.targets.size()));
  for (size_t i = 0; i < report.targets.size(); ++i) {
    const TargetFigures& f = report.targets[i];
    setRow(static_cast<int>(i), {QString::fromStdString(f.name), fourDigits(f.rmse), fourDigits(f.mae),
                                 fourDigits(f.r2), fourDigits(f.mean), fourDigits(f.std)});
  }
  draw();
}

int RegressionView::pointsDrawn() const {
  auto* g = m_left->graphCount() > 0 ? m_left->graph(0) : nullptr;
  return g ? g->dataCount() : 0;
}

std::vector<double> RegressionView::residualCounts() const {
  std::vector<double> out;
  if (m_right->plottableCount() == 0) return out;
  if (auto* bars = qobject_cast<QCPBars*>(m_right->plottable(0)))
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) out.push_back(it->value);
  return out;
}

void RegressionView::draw() {
  m_left->clearPlottables();
  m_right->clearPlottables();
  const int t = m_chooser->currentIndex();
  if (t < 0 || static_cast<size_t>(t) >= m_report.targets.size()) {
    m_left->replot();
    m_right->replot();
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
  const QColor dots(0, 114, 178);
  auto* points = m_left->addGraph();
  points->setLineStyle(QCPGraph::lsNone);
  points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dots, dots, 4));
  points->setData(x, y, /*alreadySorted=*/false);
  double lo = 0, hi = 1;
  if (!x.isEmpty()) {
    lo = std::min(*std::min_element(x.begin(), x.end()), *std::min_element(y.begin(), y.end()));
    hi = std::max(*std::max_element(x.begin(), x.end()), *std::max_element(y.begin(), y.end()));
    if (!(hi > lo)) hi = lo + 1;
  }
  auto* identity = m_left->addGraph();
  identity->setName(tr("perfect"));
  identity->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
  identity->setData({lo, hi}, {lo, hi});
  const double pad = 0.04 * (hi - lo);
  m_left->xAxis->setRange(lo - pad, hi + pad);
  m_left->yAxis->setRange(lo - pad, hi + pad);

  const Histogram h = residualHistogram(residuals, 30);
  auto* bars = new QCPBars(m_right->xAxis, m_right->yAxis);
  QVector<double> centres, counts;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    centres << h.from + (static_cast<double>(b) + 0.5) * h.width;
    counts << h.counts[b];
  }
  bars->setData(centres, counts, true);
  bars->setWidth(h.width);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(213, 94, 0));
  m_right->rescaleAxes();
  m_right->yAxis->setRangeLower(0);
  m_left->replot();
  m_right->replot();
}

}  // namespace studio::ui
