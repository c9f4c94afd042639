#include "ui/evaluation/segmentation_view.h"

#include <QComboBox>
#include <QTableWidget>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ui/common/box_drawing.h"

namespace studio::ui {
namespace {

double at(const std::vector<double>& v, size_t k) { return k < v.size() ? v[k] : std::nan(""); }

// Bars at 1..n, the chosen one in its class's colour, the others in the palette's.
void drawBars(QCustomPlot* plot, const std::vector<double>& values, const std::vector<std::string>& names, int chosen,
              const QColor& others) {
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> x, y, xc, yc;
  for (size_t k = 0; k < values.size(); ++k) {
    ticker->addTick(static_cast<double>(k + 1), QString::fromStdString(names[k]));
    (static_cast<int>(k) == chosen ? xc : x) << static_cast<double>(k + 1);
    (static_cast<int>(k) == chosen ? yc : y) << (std::isfinite(values[k]) ? values[k] : 0.0);
  }
  auto* rest = new QCPBars(plot->xAxis, plot->yAxis);
  rest->setData(x, y);
  rest->setBrush(others);
  rest->setPen(Qt::NoPen);
  auto* mine = new QCPBars(plot->xAxis, plot->yAxis);
  mine->setData(xc, yc);
  mine->setBrush(classColour(chosen, values.size()));
  mine->setPen(Qt::NoPen);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setTickLabelRotation(values.size() > 8 ? 40 : 0);
  plot->xAxis->setRange(0.3, static_cast<double>(values.size()) + 0.7);
}

std::vector<double> barValues(QCustomPlot* plot) {
  std::vector<std::pair<double, double>> bars;
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (auto* b = qobject_cast<QCPBars*>(plot->plottable(i)))
      for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) bars.emplace_back(it->key, it->value);
  std::sort(bars.begin(), bars.end());
  std::vector<double> v;
  for (const auto& b : bars) v.push_back(b.second);
  return v;
}

}  // namespace

SegmentationView::SegmentationView(QWidget* parent)
    : EvalPage(tr("Class:"), "segmentationClass", "iouPerClassBars", "segmentationClassRow",
               {tr("Class"), tr("IoU"), tr("Dice"), tr("Accuracy"), tr("Share of pixels")}, "segmentationFigures",
               parent) {
  m_left->yAxis->setLabel(tr("IoU"));
  m_left->yAxis->setRange(0, 1.02);
  m_right->yAxis->setLabel(tr("share of the class's pixels"));
  m_right->yAxis->setRange(0, 1.02);
}

void SegmentationView::clear() {
  m_report = EvalReport{};
  m_chooser->clear();
  m_table->setRowCount(0);
  draw();
}

void SegmentationView::show(const EvalReport& report) {
  m_report = report;
  setChoices(report.classes);
  const SegmentationFigures& f = report.segmentation;
  int64_t total = 0;
  for (const auto& row : report.confusion) total = std::accumulate(row.begin(), row.end(), total);
  m_table->setRowCount(static_cast<int>(report.classes.size()));
  for (size_t k = 0; k < report.classes.size(); ++k) {
    const int64_t pixels = k < report.confusion.size()
                               ? std::accumulate(report.confusion[k].begin(), report.confusion[k].end(), int64_t{0})
                               : 0;
    setRow(static_cast<int>(k),
           {QString::fromStdString(report.classes[k]), threeDecimals(at(f.iou, k)), threeDecimals(at(f.dice, k)),
            threeDecimals(at(f.classAccuracy, k)),
            threeDecimals(total > 0 ? static_cast<double>(pixels) / static_cast<double>(total) : std::nan(""))});
  }
  draw();
}

std::vector<double> SegmentationView::barsDrawn() const { return barValues(m_left); }
std::vector<double> SegmentationView::rowDrawn() const { return barValues(m_right); }

void SegmentationView::draw() {
  m_left->clearPlottables();
  m_right->clearPlottables();
  const int chosen = m_chooser->currentIndex();
  const std::vector<std::string>& names = m_report.classes;
  const QColor others = palette().color(QPalette::Mid);
  if (!names.empty()) {
    std::vector<double> iou;
    for (size_t k = 0; k < names.size(); ++k) iou.push_back(at(m_report.segmentation.iou, k));
    drawBars(m_left, iou, names, chosen, others);
    setTitle(m_left, tr("IoU per class (mean IoU %1)").arg(threeDecimals(m_report.segmentation.meanIou)));
  } else {
    setTitle(m_left, tr("IoU per class"));
  }
  const auto row = static_cast<size_t>(std::max(chosen, 0));
  if (chosen >= 0 && row < m_report.confusion.size()) {
    const auto& counts = m_report.confusion[row];
    const auto pixels = static_cast<double>(std::accumulate(counts.begin(), counts.end(), int64_t{0}));
    std::vector<double> shares;
    for (const int64_t c : counts) shares.push_back(pixels > 0 ? static_cast<double>(c) / pixels : 0.0);
    drawBars(m_right, shares, names, chosen, others);
    setTitle(m_right, pixels > 0
                          ? tr("%1's pixels predicted as each class").arg(QString::fromStdString(names[row]))
                          : tr("%1: no pixel of this class in the split").arg(QString::fromStdString(names[row])));
  } else {
    setTitle(m_right, tr("Where a class's pixels went"));
  }
  m_left->replot();
  m_right->replot();
}

}  // namespace studio::ui
