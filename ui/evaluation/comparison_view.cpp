#include "ui/evaluation/comparison_view.h"

#include <QEvent>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "studio/run_layout.h"
#include "ui/charts/plot_palette.h"
#include "ui/evaluation/evaluation_panel.h"
#include "ui/evaluation/figure_cells.h"

namespace studio::ui {
ComparedFigures comparedFigures(const EvalReport& r) {
  ComparedFigures f;
  const double none = std::nan("");
  switch (r.task.value()) {
    case TaskKind::regression:
      f.title = QObject::tr("R\u00b2 of each target, last evaluation of each run");
      f.axis = QObject::tr("R\u00b2");
      f.overall = QObject::tr("all (mean R\u00b2)");
      for (const TargetFigures& t : r.targets) {
        f.names.push_back(t.name);
        f.values.push_back(t.r2);
      }
      f.overallValue = r.r2;
      break;
    case TaskKind::multilabel:
      f.title = QObject::tr("Average precision of each label, last evaluation of each run");
      f.axis = QObject::tr("average precision");
      f.overall = QObject::tr("all (mAP)");
      for (const LabelFigures& l : r.labels) {
        f.names.push_back(l.name);
        f.values.push_back(l.averagePrecision);
      }
      f.overallValue = r.map;
      break;
    case TaskKind::detection:
      f.title = QObject::tr("AP@[.50:.95] of each class, last evaluation of each run");
      f.axis = QObject::tr("AP@[.50:.95]");
      f.overall = QObject::tr("all (mAP)");
      f.names = r.classes;
      for (size_t k = 0; k < r.classes.size(); ++k)
        f.values.push_back(k < r.apPerClass.size() ? r.apPerClass[k] : none);
      f.overallValue = r.coco.empty() ? none : r.coco.front();
      break;
    case TaskKind::instance_segmentation:
      f.title = QObject::tr("Mask AP@[.50:.95] of each class, last evaluation of each run");
      f.axis = QObject::tr("mask AP@[.50:.95]");
      f.overall = QObject::tr("all (mask mAP)");
      f.names = r.classes;
      for (size_t k = 0; k < r.classes.size(); ++k)
        f.values.push_back(k < r.maskApPerClass.size() ? r.maskApPerClass[k] : none);
      f.overallValue = r.maskCoco.empty() ? none : r.maskCoco.front();
      break;
    case TaskKind::segmentation:
      f.title = QObject::tr("IoU of each class, last evaluation of each run");
      f.axis = QObject::tr("IoU");
      f.overall = QObject::tr("all (mean IoU)");
      f.names = r.classes;
      for (size_t k = 0; k < r.classes.size(); ++k)
        f.values.push_back(k < r.segmentation.iou.size() ? r.segmentation.iou[k] : none);
      f.overallValue = r.segmentation.meanIou;
      break;
    default:
      f.title = QObject::tr("Accuracy of each class (recall), last evaluation of each run");
      f.axis = QObject::tr("recall");
      f.overall = QObject::tr("all (accuracy)");
      f.percent = true;
      f.names = r.classes;
      for (size_t k = 0; k < r.classes.size(); ++k)
        f.values.push_back(k < r.perClass.size() ? r.perClass[k].recall : none);
      f.overallValue = r.accuracy;
      break;
  }
  return f;
}

ComparisonView::ComparisonView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* several = new QSplitter(Qt::Vertical);
  m_plot = new QCustomPlot;
  m_plot->setObjectName("classComparison");
  m_plot->plotLayout()->insertRow(0);
  m_title = new QCPTextElement(m_plot, tr("Accuracy of each class (recall), last evaluation of each run"),
                               QFont(font().family(), font().pointSize(), QFont::Bold));
  m_plot->plotLayout()->addElement(0, 0, m_title);
  placeLegendBelow(m_plot);  // under the bars, never over them (issue 40, item 9)
  m_plot->setMinimumHeight(200);
  several->addWidget(m_plot);
  m_table = figureTable({tr("Class")}, "classComparisonTable");
  several->addWidget(m_table);
  several->setStretchFactor(0, 3);
  several->setStretchFactor(1, 2);
  layout->addWidget(several);
  applyPlotPalette(m_plot, palette());
}

void ComparisonView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_plot, palette());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

QString ComparisonView::compare(const QStringList& runDirs, const QStringList& labels) {
  m_plot->clearPlottables();
  // Each run's last evaluation; the first run's task kind decides what is
  // compared, and runs of another kind are named, not read as this one.
  std::vector<ComparedFigures> runs;
  std::optional<Choice<TaskKind>> kind;
  QStringList shown, missing, otherKind;
  for (int i = 0; i < runDirs.size(); ++i) {
    const auto steps = evaluationSteps(runDirs[i]);
    if (steps.empty()) {
      missing << labels[i];
      continue;
    }
    try {
      const EvalReport r = readEvalReport(
          (runDirs[i] + "/" + QString::fromStdString(run_files::evalReport(steps.back()))).toStdString());
      if (kind && !(*kind == r.task)) {
        otherKind << tr("%1 (a %2 run)").arg(labels[i], QString::fromStdString(r.task.name()));
        continue;
      }
      kind = r.task;
      runs.push_back(comparedFigures(r));
      shown << labels[i];
    } catch (const std::exception& e) {
      missing << labels[i] + " (" + QString::fromStdString(e.what()) + ")";
    }
  }
  QString text = shown.size() == 1 ? tr("Comparing 1 run's last evaluation.")
                                   : tr("Comparing %1 runs' last evaluations.").arg(shown.size());
  if (!missing.isEmpty()) text += " " + tr("Without an evaluation to compare: %1.").arg(missing.join(", "));
  if (!otherKind.isEmpty())
    text += " " + tr("Not compared with these %1 runs: %2; select runs of one task kind to compare them.")
                      .arg(QString::fromStdString(kind->name()), otherKind.join(", "));
  const ComparedFigures first = runs.empty() ? comparedFigures(EvalReport{}) : runs.front();
  m_title->setText(first.title);
  // Names in the first run's order; runs with others show theirs too.
  std::vector<std::string> names;
  for (const auto& r : runs)
    for (const auto& c : r.names)
      if (std::find(names.begin(), names.end(), c) == names.end()) names.push_back(c);
  auto* group = new QCPBarsGroup(m_plot);
  m_table->clear();
  QStringList headers{runs.empty() || first.percent ? tr("Class") : tr("Name")};
  for (const auto& l : shown) headers << l;
  m_table->setColumnCount(static_cast<int>(headers.size()));
  m_table->setHorizontalHeaderLabels(headers);
  m_table->setRowCount(static_cast<int>(names.size()) + 1);
  for (size_t k = 0; k < names.size(); ++k)
    m_table->setItem(static_cast<int>(k), 0, figureCell(QString::fromStdString(names[k])));
  m_table->setItem(static_cast<int>(names.size()), 0, figureCell(first.overall));
  const auto shownValue = [&](double v) {
    return first.percent || !std::isfinite(v) ? percentText(v) : QString::number(v, 'f', 3);
  };
  double lowest = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    QVector<double> x, y;
    for (size_t k = 0; k < names.size(); ++k) {
      const auto& own = runs[r].names;
      const auto it = std::find(own.begin(), own.end(), names[k]);
      const double v = it != own.end() ? runs[r].values[static_cast<size_t>(it - own.begin())] : std::nan("");
      m_table->setItem(static_cast<int>(k), static_cast<int>(r) + 1, figureCell(shownValue(v), true));
      if (!std::isfinite(v)) continue;
      x << static_cast<double>(k);
      y << v;
      lowest = std::min(lowest, v);
    }
    m_table->setItem(static_cast<int>(names.size()), static_cast<int>(r) + 1,
                     figureCell(shownValue(runs[r].overallValue), true));
    auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    bars->setName(shown[static_cast<int>(r)]);
    bars->setData(x, y);
    bars->setWidth(0.8 / static_cast<double>(std::max<size_t>(runs.size(), 1)));
    bars->setPen(Qt::NoPen);
    bars->setBrush(runColour(static_cast<int>(r)));
    bars->setBarsGroup(group);
  }
  m_plot->xAxis->setTicker(nameTicker(names));
  m_plot->xAxis->setTickLabelRotation(names.size() > 6 ? 40 : 0);
  m_plot->xAxis->setRange(-0.6, static_cast<double>(names.size()) - 0.4);
  m_plot->yAxis->setRange(std::max(lowest, -1.0) * 1.05, 1.05);  // R² may be below 0
  m_plot->yAxis->setLabel(first.axis);
  applyPlotPalette(m_plot, palette());
  m_plot->replot();
  return text;
}

}  // namespace studio::ui
