#pragma once
// The charts' names that follow the shown runs' tasks: the loss axis and
// the evaluation chart's title and axis. No torch header (ui/).
// Thread: GUI thread.

#include <QString>
#include <QStringList>

#include <utility>

namespace studio::ui {

// The loss chart's axis name for a run's task.kind and loss.kind (auto:
// the task's own): "cross-entropy", "focal loss", "MSE", "binary
// cross-entropy", ...
QString lossAxisLabel(const QString& taskKind, const QString& lossKind);

// The evaluation chart's title and axis name for the shown runs' task
// kinds: the units of the figures each draws there, from the catalog
// ("Evaluation accuracy" and "accuracy"; a detector's "Evaluation mAP").
std::pair<QString, QString> scoreChartText(const QStringList& taskKinds);

}  // namespace studio::ui
