#include "ui/charts/metric_chart.h"

#include <QContextMenuEvent>
#include <QEvent>
#include <QFileDialog>
#include <QFontMetrics>
#include <QMenu>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include <qcustomplot.h>

#include "ui/charts/chart_legend.h"
#include "ui/charts/plot_palette.h"

namespace studio::ui {
namespace {

// Steps are whole numbers: no tick between two steps (a run of 1 step showed
// ticks at 100.2, 100.4, ...).
class StepTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override { return std::max(1.0, QCPAxisTicker::getTickStep(range)); }
};

}  // namespace

MetricChart::MetricChart(const QString& title, const QString& yLabel, QWidget* parent)
    : QWidget(parent), m_title(title), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  setMinimumSize(260, 170);

  m_plot->plotLayout()->insertRow(0);
  auto* titleElement = new QCPTextElement(m_plot, title, QFont(font().family(), font().pointSize(), QFont::Bold));
  titleElement->setObjectName("title");
  m_plot->plotLayout()->addElement(0, 0, titleElement);
  m_xLabel = tr("step");
  m_plot->xAxis->setLabel(m_xLabel);
  m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new StepTicker));
  m_yLabel = yLabel;
  m_plot->yAxis->setLabel(yLabel);
  m_plot->legend->setVisible(false);
  QFont small = font();
  small.setPointSizeF(std::max(6.0, font().pointSizeF() - 1.5));
  m_plot->legend->setFont(small);
  // The legend sits under the axes, in columns, never over the curves or the
  // learning-rate change labels (placeLegend); a click on an entry hides or
  // shows its curve.
  m_plot->axisRect()->insetLayout()->take(m_plot->legend);
  m_plot->axisRect()->insetLayout()->simplify();
  m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  m_plot->legend->setWrap(3);
  m_plot->legend->setIconSize(14, 8);
  m_plot->legend->setRowSpacing(0);
  m_plot->legend->setColumnSpacing(6);
  m_plot->legend->setMargins(QMargins(3, 1, 3, 1));
  connect(m_plot, &QCustomPlot::legendClick, this, [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
    auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
    if (!entry) return;
    const Curve* clicked = nullptr;
    for (const auto& [key, c] : m_series)
      if (c.graph == entry->plottable()) clicked = &c;
    if (!clicked) return;
    // A run's entry hides or shows all its curves; a curve's, that curve.
    const bool run = !clicked->group.isEmpty() && legendText(item) == clicked->group;
    const bool show = !clicked->graph->visible();
    for (const auto& [key, c] : m_series)
      if (&c == clicked || (run && c.group == clicked->group)) setSeriesShown(key, show);
  });
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  m_plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  m_plot->setNoAntialiasingOnDrag(true);

  m_crossLine = new QCPItemStraightLine(m_plot);
  m_crossText = new QCPItemText(m_plot);
  m_crossText->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_crossText->position->setCoords(0.01, 0.02);
  m_crossText->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_crossText->setTextAlignment(Qt::AlignLeft);
  m_crossText->setFont(small);
  m_crossText->setPadding(QMargins(4, 2, 4, 2));
  hideCrosshair();

  // Any zoom or pan by the person ends following; double-click resets.
  connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    if (m_plot->legend->visible() && m_plot->legend->selectTest(e->position(), false) >= 0) return;  // a legend click
    m_follow = false;
  });
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_follow = false; });
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
    resetView();
    Q_EMIT viewResetByPerson();
  });
  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
    if (m_updating) return;
    m_follow = false;  // the person's zoom or pan (or a linked chart's)
    updateGraphs(false);
    if (!m_linking) Q_EMIT stepRangeChanged(r.lower, r.upper);
  });
  connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    const double x = m_plot->xAxis->pixelToCoord(e->position().x());
    showCrosshair(x);
    Q_EMIT crosshairMoved(x);
  });
  m_plot->installEventFilter(this);
  m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_plot, &QWidget::customContextMenuRequested, this, &MetricChart::showContextMenu);
  applyPalette();
}

MetricChart::~MetricChart() = default;

void MetricChart::setTitle(const QString& title) {
  m_title = title;
  fitTitle();
}

// The title as wide as the chart allows, cut at its end with an ellipsis (a
// centred text wider than the chart would lose both ends); whole in its
// tooltip.
void MetricChart::fitTitle() {
  auto* t = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
  if (!t) return;
  const int room = std::max(40, m_plot->width() - 12);
  const QString shown = QFontMetrics(t->font()).elidedText(m_title, Qt::ElideRight, room);
  if (t->text() != shown) t->setText(shown);
  m_plot->setToolTip(shown != m_title ? m_title : QString());
}

QString MetricChart::shownTitle() const {
  auto* t = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
  return t ? t->text() : QString();
}

void MetricChart::setRightAxisLabel(const QString& label) { m_plot->yAxis2->setLabel(label); }

void MetricChart::addSeries(const QString& key, const QString& label, const SeriesStyle& style) {
  if (m_series.count(key)) return;
  QCPAxis* valueAxis = style.rightAxis ? m_plot->yAxis2 : m_plot->yAxis;
  if (style.rightAxis) m_plot->yAxis2->setVisible(true);
  QCPGraph* g = m_plot->addGraph(m_plot->xAxis, valueAxis);
  g->setName(label);
  g->setPen(style.pen);
  g->setAdaptiveSampling(false);  // decimated here, exactly
  if (style.dots) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, style.pen.color(), 5));
  g->removeFromLegend();  // listed once it has a point (listLegend in updateGraphs)
  m_series[key] = Curve{label, {}, g, {}, style.smoothable && !style.dots, 0, 1, style.group};
  remap(key, m_series[key]);
  m_order.push_back(key);
}

void MetricChart::setSeriesLabel(const QString& key, const QString& label) {
  auto it = m_series.find(key);
  if (it == m_series.end() || it->second.label == label) return;
  it->second.label = label;
  it->second.graph->setName(label);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MetricChart::append(const QString& key, double x, double y) {
  auto it = m_series.find(key);
  if (it == m_series.end() || !std::isfinite(y)) return;
  Curve& c = it->second;
  c.data.append(x, y);
  if (!transformed(c)) return;
  // A series is drawn whole or not at all: shown has every sample or none.
  const double mx = m_xMap ? m_xMap(key, x) : x;
  const double sy = m_smoothing > 0 && c.smoothable ? smoothNext(c, y) : y;
  if (std::isfinite(mx) && c.shown.size() + 1 == c.data.size())
    c.shown.append(mx, sy);
  else
    c.shown.clear();
}

double MetricChart::smoothNext(Curve& c, double y) const {
  c.ema = m_smoothing * c.ema + (1 - m_smoothing) * y;
  c.debias *= m_smoothing;
  return c.ema / (1 - c.debias);
}

void MetricChart::setYLabel(const QString& label) {
  if (label == m_yLabel) return;
  m_yLabel = label;
  m_plot->yAxis->setLabel(m_smoothing > 0 ? tr("%1 · smoothed %2").arg(m_yLabel).arg(m_smoothing) : m_yLabel);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MetricChart::setSmoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.999);
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  m_plot->yAxis->setLabel(weight > 0 ? tr("%1 · smoothed %2").arg(m_yLabel).arg(weight) : m_yLabel);
  for (auto& [key, c] : m_series) remap(key, c);
  updateGraphs(m_follow);
}

void MetricChart::setData(const QString& key, PlotSeries data) {
  auto it = m_series.find(key);
  if (it == m_series.end()) return;
  it->second.data = std::move(data);
  remap(key, it->second);
}

void MetricChart::remap(const QString& key, Curve& c) const {
  c.shown.clear();
  c.ema = 0;
  c.debias = 1;
  if (!transformed(c)) return;
  const bool smooth = m_smoothing > 0 && c.smoothable;
  c.shown.x.reserve(c.data.size());
  c.shown.y.reserve(c.data.size());
  for (size_t i = 0; i < c.data.size(); ++i) {
    const double mx = m_xMap ? m_xMap(key, c.data.x[i]) : c.data.x[i];
    if (!std::isfinite(mx)) {
      c.shown.clear();
      return;
    }
    c.shown.append(mx, smooth ? smoothNext(c, c.data.y[i]) : c.data.y[i]);
  }
}

const PlotSeries* MetricChart::shownSeries(const QString& key) const {
  auto it = m_series.find(key);
  return it == m_series.end() ? nullptr : &drawn(it->second);
}

void MetricChart::setXMap(XMap map, const QString& label, XTicks ticks) {
  m_xMap = std::move(map);
  m_xLabel = label;
  m_plot->xAxis->setLabel(label);
  if (ticks == XTicks::WholeSteps) {
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new StepTicker));
  } else if (ticks == XTicks::Time) {
    auto time = QSharedPointer<QCPAxisTickerTime>(new QCPAxisTickerTime);
    time->setTimeFormat("%h:%m:%s");
    m_plot->xAxis->setTicker(time);
  } else {
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  for (auto& [key, c] : m_series) remap(key, c);
  for (const Marker& m : m_markers) placeMarker(m);
  hideCrosshair();
  m_follow = true;
  updateGraphs(true);
}

const PlotSeries* MetricChart::series(const QString& key) const {
  auto it = m_series.find(key);
  return it == m_series.end() ? nullptr : &it->second.data;
}

std::vector<QString> MetricChart::seriesKeys() const { return m_order; }

void MetricChart::dropAfter(const QString& keyPrefix, double x) {
  for (auto& [key, curve] : m_series)
    if (key.startsWith(keyPrefix)) {
      curve.data.dropAfter(x);
      remap(key, curve);
    }
}

void MetricChart::removeSeries(const QString& key) {
  auto it = m_series.find(key);
  if (it == m_series.end()) return;
  m_plot->removeGraph(it->second.graph);
  m_series.erase(it);
  m_order.erase(std::remove(m_order.begin(), m_order.end(), key), m_order.end());
  updateGraphs(false);
}

void MetricChart::clear() {
  for (auto& [key, curve] : m_series) m_plot->removeGraph(curve.graph);
  m_series.clear();
  m_order.clear();
  // Every item but the crosshair: the markers' lines and their labels.
  m_markers.clear();
  for (int i = m_plot->itemCount() - 1; i >= 0; --i) {
    QCPAbstractItem* item = m_plot->item(i);
    if (item != m_crossLine && item != m_crossText) m_plot->removeItem(item);
  }
  m_plot->yAxis2->setVisible(false);
  placeLegend(false);
  m_follow = true;
  // No zoom of what was drawn before is left for what comes next.
  m_updating = true;  // not the person's zoom: linked charts keep theirs
  for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2}) axis->setRange(0, 1);
  m_updating = false;
  hideCrosshair();  // it read values of curves that are gone
  refresh();
}

QStringList MetricChart::markerLabels() const {
  QStringList labels;
  for (const Marker& m : m_markers) labels << m.text->text();
  return labels;
}

void MetricChart::addMarker(double x, const QString& label, const QString& key) {
  auto* line = new QCPItemStraightLine(m_plot);
  QPen pen(palette().color(QPalette::Highlight), 1, Qt::DashLine);
  line->setPen(pen);
  line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
  line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
  auto* text = new QCPItemText(m_plot);
  text->position->setTypeX(QCPItemPosition::ptPlotCoords);
  text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  text->setText(label);
  text->setColor(pen.color());
  m_markers.push_back({line, text, x, key});
  placeMarker(m_markers.back());
}

void MetricChart::placeMarker(const Marker& m) const {
  const double x = m_xMap ? m_xMap(m.key, m.step) : m.step;
  m.line->setVisible(std::isfinite(x));
  m.text->setVisible(std::isfinite(x));
  if (!std::isfinite(x)) return;
  m.line->point1->setCoords(x, 0);
  m.line->point2->setCoords(x, 1);
  m.text->position->setCoords(x, 0.98);
}

void MetricChart::setLogScale(bool on) {
  m_logScale = on;
  m_plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  chooseValueTicker(m_plot->yAxis->range());
  updateGraphs(true);
}

// A log axis over a decade or more gets ticks at 1, 2, 5 times the powers of
// ten; over less than a decade (a loss from 0.3 to 2.5), where powers of ten
// alone left no tick below 1, evenly spaced ones, which never crowd there.
void MetricChart::chooseValueTicker(const QCPRange& range) {
  QCPAxis* y = m_plot->yAxis;
  if (!m_logScale) {
    if (y->ticker().dynamicCast<QCPAxisTickerLog>()) y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    return;
  }
  const bool decades = range.lower > 0 && range.upper / range.lower >= 10;
  const bool isLog = !y->ticker().dynamicCast<QCPAxisTickerLog>().isNull();
  if (decades && !isLog) {
    auto log = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
    log->setLogBase(10);
    log->setSubTickCount(8);
    y->setTicker(log);
  } else if (!decades && isLog) {
    y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
}

void MetricChart::resetView() {
  m_follow = true;
  refresh();
}

void MetricChart::refresh() { updateGraphs(m_follow); }

void MetricChart::refreshNow() {
  updateGraphs(m_follow);
  m_plot->replot(QCustomPlot::rpImmediateRefresh);
}

void MetricChart::updateGraphs(bool fitView) {
  m_updating = true;
  if (fitView) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& [key, c] : m_series) {
      const PlotSeries& d = drawn(c);
      if (d.empty()) continue;
      lo = std::min(lo, d.x.front());
      hi = std::max(hi, d.x.back());
    }
    if (std::isfinite(lo)) {
      // A little room at both ends, so a point at either end (a single
      // evaluation) is drawn whole, inside the axes.
      const double pad = hi > lo ? (hi - lo) * 0.02 : 1.0;
      m_plot->xAxis->setRange(lo - pad, hi + pad);
    }
  }
  const QCPRange range = m_plot->xAxis->range();
  const int columns = std::max(64, m_plot->axisRect()->width() > 0 ? m_plot->axisRect()->width() : width());
  std::vector<double> xs, ys;
  m_drawnPoints = 0;
  for (const auto& [key, c] : m_series) {
    decimateMinMax(drawn(c), range.lower, range.upper, columns, xs, ys);
    QVector<QCPGraphData> points;
    points.reserve(static_cast<qsizetype>(xs.size()));
    for (size_t i = 0; i < xs.size(); ++i) points.append(QCPGraphData(xs[i], ys[i]));
    c.graph->data()->set(points, true);
    m_drawnPoints += xs.size();
  }
  // The legend lists the curves that have points (a run without a weight
  // average shows no "eval (EMA)"), in the order they got them; with several
  // runs' curves, each run once, under its name.
  std::erase_if(m_listed, [&](const QString& key) { return !m_series.count(key) || drawn(m_series.at(key)).empty(); });
  for (const QString& key : m_order)
    if (!drawn(m_series.at(key)).empty() && std::find(m_listed.begin(), m_listed.end(), key) == m_listed.end())
      m_listed.push_back(key);
  std::vector<QString> groups;
  for (const QString& key : m_listed)
    if (const Curve& c = m_series.at(key);
        !c.group.isEmpty() && std::find(groups.begin(), groups.end(), c.group) == groups.end())
      groups.push_back(c.group);
  std::vector<LegendEntry> entries;
  for (const QString& key : m_listed) {
    const Curve& c = m_series.at(key);
    if (groups.size() < 2 || c.group.isEmpty()) {
      entries.push_back({c.graph, {}});
      continue;
    }
    // The run's first curve in its full colour (the raw loss is drawn faint).
    auto it = std::find_if(entries.begin(), entries.end(), [&](const LegendEntry& e) { return e.text == c.group; });
    const bool full = c.graph->pen().color().alpha() == 255;
    if (it == entries.end())
      entries.push_back({c.graph, c.group});
    else if (full && static_cast<QCPGraph*>(it->plottable)->pen().color().alpha() != 255)
      it->plottable = c.graph;
  }
  listLegend(m_plot->legend, entries);
  const int listed = static_cast<int>(entries.size());
  placeLegend(listed > 1);
  if (listed > 1) {
    // As many columns (up to 3) as the widest entry leaves room for, so every
    // entry reads whole (two runs overlaid have long names).
    const QFontMetrics metrics(m_plot->legend->font());
    int widest = 0;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i)
      widest = std::max(widest, metrics.horizontalAdvance(legendText(m_plot->legend->item(i))));
    const int entry = widest + m_plot->legend->iconSize().width() + m_plot->legend->iconTextPadding() + 16;
    const int room = std::max(m_plot->width(), 1) - 10;
    const int columns = std::clamp(room / std::max(entry, 1), 1, 3);
    if (m_plot->legend->wrap() != columns) {
      m_plot->legend->setWrap(columns);
      m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // rearranged at the new wrap
    }
  }
  if (fitView) {
    for (QCPAxis* axis : {m_plot->yAxis, m_plot->yAxis2}) {
      bool any = false;
      QCPRange r;
      for (const auto& [key, c] : m_series) {
        if (c.graph->valueAxis() != axis || c.graph->data()->isEmpty()) continue;
        bool found = false;
        const QCPRange gr = c.graph->getValueRange(found, QCP::sdBoth, range);
        if (!found) continue;
        r = any ? QCPRange(std::min(r.lower, gr.lower), std::max(r.upper, gr.upper)) : gr;
        any = true;
      }
      if (!any) continue;
      if (axis->scaleType() == QCPAxis::stLogarithmic) {
        r = QCPRange(r.lower / 1.25, r.upper * 1.25);
      } else {
        // A flat line: a tenth of its value each side, or 1 at 0 (a
        // detector's mAP of 0 drew ticks of 1e-9).
        const double pad = r.size() > 0 ? r.size() * 0.06 : r.upper != 0 ? std::abs(r.upper) * 0.1 : 1.0;
        r = QCPRange(r.lower - pad, r.upper + pad);
      }
      axis->setRange(r);
      if (axis == m_plot->yAxis) chooseValueTicker(r);
    }
  }
  m_updating = false;
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MetricChart::showCrosshair(double x) {
  if (m_order.empty()) return;
  QStringList lines;
  double snapped = x;
  bool any = false;
  for (const QString& key : m_order) {
    const Curve& c = m_series.at(key);
    const PlotSeries& d = drawn(c);
    if (d.empty()) continue;
    const size_t i = d.indexNear(x);
    if (!any) snapped = d.x[i];
    any = true;
    // The step always; the x shown too when it is not steps.
    const QString at = m_xMap ? QStringLiteral("step %1, %2 %3").arg(c.data.x[i]).arg(m_xLabel).arg(d.x[i], 0, 'g', 5)
                              : QStringLiteral("step %1").arg(c.data.x[i]);
    lines << QStringLiteral("%1: %2 (%3)").arg(c.label).arg(d.y[i], 0, 'g', 5).arg(at);
  }
  if (!any) return;
  m_crossLine->point1->setCoords(snapped, 0);
  m_crossLine->point2->setCoords(snapped, 1);
  m_crossLine->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_crossLine->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_crossText->setText(lines.join('\n'));
  m_crossLine->setVisible(true);
  m_crossText->setVisible(true);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MetricChart::hideCrosshair() {
  m_crossLine->setVisible(false);
  m_crossText->setVisible(false);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool MetricChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_plot && event->type() == QEvent::Leave) {
    hideCrosshair();
    Q_EMIT crosshairLeft();
  }
  if (watched == m_plot && event->type() == QEvent::Resize) fitTitle();
  return QWidget::eventFilter(watched, event);
}

void MetricChart::setStepRange(double lower, double upper) {
  if (!(upper > lower)) return;
  m_follow = false;
  m_linking = true;
  m_plot->xAxis->setRange(lower, upper);
  m_linking = false;
}

double MetricChart::stepRangeLower() const { return m_plot->xAxis->range().lower; }
double MetricChart::stepRangeUpper() const { return m_plot->xAxis->range().upper; }

bool MetricChart::crosshairShown() const { return m_crossText->visible(); }

bool MetricChart::seriesShown(const QString& key) const {
  auto it = m_series.find(key);
  return it != m_series.end() && it->second.graph->visible();
}

void MetricChart::setSeriesShown(const QString& key, bool shown) {
  auto it = m_series.find(key);
  if (it == m_series.end()) return;
  QCPGraph* g = it->second.graph;
  g->setVisible(shown);
  // A hidden curve's entry stays, greyed, to be clicked again.
  if (auto* entry = m_plot->legend->itemWithPlottable(g)) {
    QColor text = palette().color(QPalette::WindowText);
    if (!shown) text.setAlpha(90);
    entry->setTextColor(text);
  }
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// The legend in a row of its own under the axes while there is more than one
// curve to tell apart; out of the layout otherwise, taking no room.
void MetricChart::placeLegend(bool shown) {
  QCPLayoutGrid* grid = m_plot->plotLayout();
  const bool placed = grid->rowCount() > 2 && grid->hasElement(2, 0) && grid->element(2, 0) == m_plot->legend;
  if (shown && !placed) {
    grid->insertRow(2);
    grid->addElement(2, 0, m_plot->legend);
    grid->setRowStretchFactor(2, 0.001);
  } else if (!shown && placed) {
    grid->take(m_plot->legend);
    grid->simplify();
  }
  m_plot->legend->setVisible(shown);
}

double MetricChart::xTickStep() const {
  const QVector<double> ticks = m_plot->xAxis->tickVector();
  return ticks.size() >= 2 ? ticks[1] - ticks[0] : 0;
}

QStringList MetricChart::yTickLabels() const {
  QStringList labels;
  for (const QString& l : m_plot->yAxis->tickVectorLabels()) labels << l;
  return labels;
}

void MetricChart::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QWidget::changeEvent(event);
}

void MetricChart::applyPalette() {
  const QPalette p = palette();
  const QColor text = p.color(QPalette::WindowText);
  applyPlotPalette(m_plot, p);
  m_crossLine->setPen(QPen(text, 1, Qt::DotLine));
  m_crossText->setColor(text);
  QColor box = p.color(QPalette::ToolTipBase);
  box.setAlpha(225);
  m_crossText->setBrush(box);
  m_crossText->setColor(p.color(QPalette::ToolTipText));
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace studio::ui
