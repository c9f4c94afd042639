// The Search tab's plots: each trial's value with the best so far, the
// trials across the space's axes (brushed to select), and fANOVA's
// importances (StudyPanel, study_panel.h).
#include <QFont>
#include <QItemSelectionModel>
#include <QSignalBlocker>
#include <QTableWidget>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "qcustomplot.h"
#include "ui/search/study_json.h"
#include "ui/search/study_panel.h"

namespace studio::ui {

using namespace study_json;

void StudyPanel::plotBest() {
  m_best->clearGraphs();
  const bool maximize = m_study.value("direction", "maximize") == "maximize";
  QVector<double> x, y, bx, by;
  double best = kNaN;
  for (const auto& t : m_study["trials"]) {
    const double v = number(t.value("value", nlohmann::json()));
    if (!std::isfinite(v)) continue;
    x << t.value("number", 0);
    y << v;
    if (!std::isfinite(best) || (maximize ? v > best : v < best)) best = v;
    bx << t.value("number", 0);
    by << best;
  }
  QCPGraph* dots = m_best->addGraph();
  dots->setName(tr("trial"));
  dots->setLineStyle(QCPGraph::lsNone);
  dots->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor("#4a7bd0"), 6));
  dots->setData(x, y);
  QCPGraph* line = m_best->addGraph();
  line->setName(tr("best so far"));
  line->setLineStyle(QCPGraph::lsStepLeft);
  line->setPen(QPen(QColor("#d07a2f"), 2));
  line->setData(bx, by);
  m_best->yAxis->setLabel(QString::fromStdString(m_study.value("metric", "")));
  // The axes span the trials, from their own values: rescaleAxes kept the
  // last range's size around a single trial (one trial was drawn on a
  // +-2e7 axis, issue 60). A margin above and below: the best and worst
  // trials' dots were cut in half by the axes' edges.
  if (y.isEmpty()) {
    m_best->xAxis->setRange(-0.5, 0.5);
    m_best->yAxis->setRange(0, 1);
  } else {
    const auto [xlo, xhi] = std::minmax_element(x.begin(), x.end());
    const auto [ylo, yhi] = std::minmax_element(y.begin(), y.end());
    m_best->xAxis->setRange(*xlo - 0.5, *xhi + 0.5);
    const double pad = *yhi > *ylo ? (*yhi - *ylo) * 0.08 : std::max(std::abs(*ylo) * 0.05, 0.01);
    m_best->yAxis->setRange(*ylo - pad, *yhi + pad);
  }
  m_best->replot();
}

std::set<int> StudyPanel::selectedTrialNumbers() const {
  std::set<int> numbers;
  for (const auto* item : m_table->selectedItems()) numbers.insert(m_table->item(item->row(), 0)->text().toInt());
  return numbers;
}

QCPRange StudyPanel::metricRange() const {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : m_study.value("trials", nlohmann::json::array())) {
    const double v = number(t.value("value", nlohmann::json()));
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  return QCPRange(lo, hi);
}

std::vector<double> StudyPanel::axisValues(const nlohmann::json& trial, const QCPRange& metric) const {
  std::vector<double> out;
  for (const auto& p : m_study["space"]) {
    const std::string key = p.value("key", "");
    if (!trial["params"].contains(key)) {
      out.push_back(kNaN);
      continue;
    }
    const auto& v = trial["params"][key];
    if (p.value("kind", "") == "choice") {
      const auto& c = p["choices"];
      double at = kNaN;
      for (size_t i = 0; i < c.size(); ++i)
        if (c[i] == v) at = c.size() > 1 ? static_cast<double>(i) / static_cast<double>(c.size() - 1) : 0.5;
      out.push_back(at);
      continue;
    }
    const double lo = number(p["low"]), hi = number(p["high"]), x = number(v);
    out.push_back(p.value("log", false) ? (std::log(x) - std::log(lo)) / (std::log(hi) - std::log(lo))
                                        : (x - lo) / (hi - lo));
  }
  const double v = number(trial.value("value", nlohmann::json()));
  out.push_back(!std::isfinite(v)             ? kNaN
                : metric.upper > metric.lower ? (v - metric.lower) / (metric.upper - metric.lower)
                                              : 0.5);
  return out;
}

void StudyPanel::plotParallel() {
  m_parallel->clearGraphs();
  m_parallel->clearItems();
  m_brush = nullptr;
  const QStringList names = axisNames(m_study);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int i = 0; i < names.size(); ++i) ticker->addTick(i, names[i]);
  m_parallel->xAxis->setTicker(ticker);
  m_parallel->xAxis->setRange(-0.3, names.size() - 0.7);
  const std::set<int> selected = selectedTrialNumbers();
  QCPColorGradient gradient(QCPColorGradient::gpJet);
  const QCPRange metric = metricRange();
  for (const auto& t : m_study.value("trials", nlohmann::json::array())) {
    const std::vector<double> v = axisValues(t, metric);
    QVector<double> x, y;
    for (size_t i = 0; i < v.size(); ++i) x << static_cast<double>(i), y << v[i];
    QCPGraph* g = m_parallel->addGraph();
    g->setData(x, y, true);
    const auto state = trialState(t);
    QColor c = state == TrialState::completed && std::isfinite(v.back()) ? gradient.color(v.back(), QCPRange(0, 1))
               : state == TrialState::failed                             ? QColor(208, 60, 47, 90)
                                                                         : QColor(136, 136, 136, 110);
    const bool chosen = selected.count(t.value("number", -1)) > 0;
    QPen pen(c, chosen ? 3.5 : 1.5);
    if (state == TrialState::running || state == TrialState::stopped) pen.setStyle(Qt::DashLine);
    g->setPen(pen);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  }
  // Each axis's ends.
  int i = 0;
  for (const auto& p : m_study.value("space", nlohmann::json::array())) {
    const bool choice = p.value("kind", "") == "choice";
    const QString low = choice ? text(p["choices"].front()) : text(p["low"]);
    const QString high = choice ? text(p["choices"].back()) : text(p["high"]);
    for (const auto& [label, y] : {std::pair{low, -0.05}, std::pair{high, 1.05}}) {
      auto* t = new QCPItemText(m_parallel);
      t->position->setCoords(i, y);
      t->setText(label);
      t->setFont(QFont(font().family(), 8));
    }
    ++i;
  }
  m_parallel->replot();
}

void StudyPanel::plotImportance() {
  m_importance->clearPlottables();
  m_importance->clearItems();
  const auto& imp = m_study.value("importances", nlohmann::json());
  if (!imp.is_object() || imp.empty()) {
    auto* t = new QCPItemText(m_importance);
    t->position->setType(QCPItemPosition::ptAxisRectRatio);
    t->position->setCoords(0.5, 0.5);
    t->setText(tr("importance: %1").arg(QString::fromStdString(m_study.value("importance_note", "not yet"))));
    m_importance->replot();
    return;
  }
  auto* bars = new QCPBars(m_importance->xAxis, m_importance->yAxis);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  // The most important first (a JSON object keeps its keys sorted by name).
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [name, v] : imp.items()) ranked.emplace_back(number(v), name);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QVector<double> keys, values;
  int k = 0;
  for (const auto& [v, name] : ranked) {
    keys << k;
    values << v;
    ticker->addTick(k++, QString::fromStdString(name));
  }
  bars->setData(keys, values);
  bars->setBrush(QColor("#4a7bd0"));
  m_importance->xAxis->setTicker(ticker);
  m_importance->xAxis->setRange(-0.6, k - 0.4);
  m_importance->yAxis->setRange(0, 1);
  m_importance->yAxis->setLabel(tr("importance (fANOVA)"));
  m_importance->replot();
}

void StudyPanel::brush(int axis, double lo, double hi) {
  const auto& trials = m_study.value("trials", nlohmann::json::array());
  {
    const QSignalBlocker block(m_table);
    m_table->clearSelection();
    const QCPRange metric = metricRange();
    for (int r = 0; r < static_cast<int>(trials.size()); ++r) {
      const std::vector<double> v = axisValues(trials[r], metric);
      if (axis >= 0 && axis < static_cast<int>(v.size()) && v[axis] >= lo && v[axis] <= hi)
        m_table->selectionModel()->select(m_table->model()->index(r, 0),
                                          QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }
  plotParallel();
  m_brush = new QCPItemRect(m_parallel);
  m_brush->topLeft->setCoords(axis - 0.08, hi);
  m_brush->bottomRight->setCoords(axis + 0.08, lo);
  m_brush->setBrush(QColor(74, 123, 208, 60));
  m_parallel->replot();
  Q_EMIT runsSelected(selectedRunDirs());
}

}  // namespace studio::ui
