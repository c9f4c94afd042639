// The charts' names that follow the shown runs' tasks (chart_names.h).
#include "ui/charts/chart_names.h"

#include <QObject>

#include <string>
#include <vector>

#include "studio/metric_catalog.h"

namespace studio::ui {

std::pair<QString, QString> scoreChartText(const QStringList& taskKinds) {
  QStringList units;
  for (const QString& name : taskKinds) {
    Choice<TaskKind> task;
    task.setName(name.toStdString());
    if (!task.known()) continue;
    for (const MetricSpec& m : metricCatalog())
      if (m.chart == MetricPlot::Accuracy && m.kind == RecordKind::Eval && m.recordedBy(task.value()) &&
          !units.contains(QString::fromUtf8(m.unit)))
        units << QString::fromUtf8(m.unit);
  }
  if (units.isEmpty()) return {QObject::tr("Evaluation accuracy · R\u00b2"), QObject::tr("accuracy or R\u00b2")};
  std::vector<std::string> names;
  for (const QString& u : units) names.push_back(u.toStdString());
  return {QObject::tr("Evaluation %1").arg(units.join(" · ")), QString::fromStdString(listText(names))};
}

QString lossAxisLabel(const QString& taskKind, const QString& lossKind) {
  Choice<TaskKind> task;
  Choice<LossKind> loss;
  task.setName(taskKind.toStdString());
  loss.setName(lossKind.isEmpty() ? "auto" : lossKind.toStdString());
  if (!loss.known()) return lossKind;
  if (boxesTask(task)) return QObject::tr("detector loss (the sum of its parts)");
  if (task == TaskKind::segmentation) return QObject::tr("cross-entropy per pixel");
  const LossKind kind = loss != LossKind::auto_        ? loss.value()
                        : task == TaskKind::regression ? LossKind::mse
                        : task == TaskKind::multilabel ? LossKind::bce
                                                       : LossKind::cross_entropy;
  switch (kind) {
    case LossKind::focal:
      return QObject::tr("focal loss");
    case LossKind::bce:
      return QObject::tr("binary cross-entropy");
    case LossKind::mse:
      return QObject::tr("MSE");
    case LossKind::l1:
      return QObject::tr("L1");
    case LossKind::huber:
      return QObject::tr("Huber");
    case LossKind::smooth_l1:
      return QObject::tr("smooth L1");
    default:
      return QObject::tr("cross-entropy");
  }
}

}  // namespace studio::ui
