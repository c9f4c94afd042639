#include "ui/evaluation/detection_view.h"

#include <QComboBox>
#include <QTableWidget>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/common/box_drawing.h"

namespace studio::ui {

double ap50Of(const std::vector<double>& p) {
  if (p.empty()) return std::nan("");
  double sum = 0;
  int n = 0;
  for (const double v : p)
    if (v > -1) {
      sum += v;
      ++n;
    }
  return n > 0 ? sum / n : std::nan("");
}

double recallReached(const std::vector<double>& p) {
  if (p.empty()) return std::nan("");
  double reached = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0) reached = static_cast<double>(i) / static_cast<double>(p.size() - 1);
  return reached;
}

DetectionView::DetectionView(QWidget* parent)
    : EvalPage(tr("Class:"), "detectionClass", "apPerClassBars", "detectionPrCurve",
               {tr("Class"), tr("AP@[.50:.95]"), tr("AP50"), tr("Recall reached at IoU 0.5")}, "detectionFigures",
               parent) {
  m_left->yAxis->setLabel(tr("AP@[.50:.95]"));
  m_left->yAxis->setRange(0, 1.02);
  m_right->xAxis->setLabel(tr("recall"));
  m_right->yAxis->setLabel(tr("precision"));
  m_right->xAxis->setRange(0, 1);
  m_right->yAxis->setRange(0, 1.02);
}

void DetectionView::clear() {
  m_report = EvalReport{};
  m_chooser->clear();
  m_table->setRowCount(0);
  draw();
}

void DetectionView::show(const EvalReport& report) {
  m_report = report;
  setChoices(report.classes);
  m_table->setRowCount(static_cast<int>(report.classes.size()));
  for (size_t i = 0; i < report.classes.size(); ++i) {
    const auto curve = i < report.precision50.size() ? report.precision50[i] : std::vector<double>{};
    const double ap = i < report.apPerClass.size() ? report.apPerClass[i] : std::nan("");
    setRow(static_cast<int>(i), {QString::fromStdString(report.classes[i]), threeDecimals(ap),
                                 threeDecimals(ap50Of(curve)), threeDecimals(recallReached(curve))});
  }
  draw();
}

std::vector<double> DetectionView::barsDrawn() const {
  std::vector<std::pair<double, double>> bars;  // (class + 1, AP) of both series
  for (int i = 0; i < m_left->plottableCount(); ++i)
    if (auto* b = qobject_cast<QCPBars*>(m_left->plottable(i)))
      for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) bars.emplace_back(it->key, it->value);
  std::sort(bars.begin(), bars.end());
  std::vector<double> v;
  for (const auto& b : bars) v.push_back(b.second);
  return v;
}

std::vector<std::pair<double, double>> DetectionView::curveDrawn() const {
  std::vector<std::pair<double, double>> v;
  auto* g = m_right->graphCount() > 0 ? m_right->graph(0) : nullptr;
  if (g)
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) v.emplace_back(it->key, it->value);
  return v;
}

void DetectionView::draw() {
  m_left->clearPlottables();
  m_right->clearPlottables();
  const int chosen = m_chooser->currentIndex();
  const size_t classes = m_report.classes.size();
  if (classes > 0) {
    // The chosen class's bar in its colour, the others in the palette's.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QVector<double> x, y, xc, yc;
    for (size_t k = 0; k < classes; ++k) {
      const double ap =
          k < m_report.apPerClass.size() && std::isfinite(m_report.apPerClass[k]) ? m_report.apPerClass[k] : 0.0;
      ticker->addTick(static_cast<double>(k + 1), QString::fromStdString(m_report.classes[k]));
      (static_cast<int>(k) == chosen ? xc : x) << static_cast<double>(k + 1);
      (static_cast<int>(k) == chosen ? yc : y) << ap;
    }
    auto* others = new QCPBars(m_left->xAxis, m_left->yAxis);
    others->setData(x, y);
    others->setBrush(palette().color(QPalette::Mid));
    others->setPen(Qt::NoPen);
    auto* mine = new QCPBars(m_left->xAxis, m_left->yAxis);
    mine->setData(xc, yc);
    mine->setBrush(classColour(chosen, classes));
    mine->setPen(Qt::NoPen);
    m_left->xAxis->setTicker(ticker);
    m_left->xAxis->setTickLabelRotation(classes > 8 ? 40 : 0);
    m_left->xAxis->setRange(0.3, static_cast<double>(classes) + 0.7);
    setTitle(m_left, tr("AP@[.50:.95] per class (mAP %1)").arg(threeDecimals(m_report.map)));
  } else {
    setTitle(m_left, tr("AP per class"));
  }
  if (chosen >= 0 && static_cast<size_t>(chosen) < m_report.precision50.size() &&
      !m_report.precision50[static_cast<size_t>(chosen)].empty()) {
    const auto& p = m_report.precision50[static_cast<size_t>(chosen)];
    QVector<double> r, q;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > -1) {
        r << static_cast<double>(i) / static_cast<double>(p.size() - 1);
        q << p[i];
      }
    auto* g = m_right->addGraph();
    g->setData(r, q, /*alreadySorted=*/true);
    g->setPen(QPen(classColour(chosen, classes), 2));
    setTitle(m_right, tr("%1: precision-recall at IoU 0.5, AP50 %2")
                          .arg(QString::fromStdString(m_report.classes[static_cast<size_t>(chosen)]))
                          .arg(threeDecimals(ap50Of(p))));
  } else {
    setTitle(m_right, chosen >= 0 ? tr("Precision-recall: no box of this class in the split") : tr("Precision-recall"));
  }
  m_left->replot();
  m_right->replot();
}

}  // namespace studio::ui
