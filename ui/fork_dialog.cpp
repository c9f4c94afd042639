#include "ui/fork_dialog.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>

#include <algorithm>

#include "ui/form_dialog.h"

namespace studio::ui {

std::optional<ForkOptions> askForkOptions(QWidget* parent, const QString& runDir, const TrainConfig& formConfig,
                                          int64_t liveStep, QString* error) {
  TrainConfig run;
  try {
    run = loadConfigFile((runDir + "/settings.json").toStdString());
  } catch (const std::exception& e) {
    *error = QString::fromStdString(e.what());
    return std::nullopt;
  }
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("Fork %1").arg(QFileInfo(runDir).fileName()));
  auto* form = new QFormLayout(&dialog);
  auto* from = new QComboBox;
  const bool live = liveStep >= 0;
  if (live) {
    from->addItem(QObject::tr("its current weights (step %1; it stays paused)").arg(liveStep), "last");
  } else {
    from->addItem(QObject::tr("last checkpoint"), "last");
    if (QFile::exists(runDir + "/checkpoints/best.ckpt")) from->addItem(QObject::tr("best checkpoint"), "best");
  }
  QStringList steps = QDir(runDir + "/checkpoints").entryList({"step-*.ckpt"}, QDir::Files);
  std::sort(steps.begin(), steps.end(), [](const QString& a, const QString& b) {
    return a.mid(5).chopped(5).toLongLong() < b.mid(5).chopped(5).toLongLong();
  });
  if (!live)
    for (const QString& f : steps) from->addItem(f.chopped(5), f.chopped(5));
  QStringList changes;
  for (const auto& a : settingsAssignments(settingsChanges(run, formConfig))) {
    const QString line = QString::fromStdString(a);
    const bool modelOrData = (line.startsWith("model.") || line.startsWith("data.")) &&
                             !line.startsWith("data.augment_");
    if (!modelOrData) changes << line;
  }
  auto* edits = new QPlainTextEdit(changes.join("\n"));
  edits->setPlaceholderText(QObject::tr("one setting per line, e.g.\noptimizer.lr=0.01\ntrain.epochs=6"));
  form->addRow(new QLabel(QObject::tr("A new run from this run's weights with these settings changed (from the "
                                      "form; edit them). The model and the data stay the run's.")));
  form->addRow(QObject::tr("From"), from);
  form->addRow(QObject::tr("Changes"), edits);
  if (!runFormDialog(dialog, form)) return std::nullopt;
  ForkOptions fork;
  fork.from = from->currentData().toString().toStdString();
  for (const QString& line : edits->toPlainText().split('\n', Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) fork.overrides.push_back(line.trimmed().toStdString());
  return fork;
}

}  // namespace studio::ui
