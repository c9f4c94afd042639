#include "ui/runs/continue_dialog.h"

#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include "ui/common/form_dialog.h"

namespace studio::ui {

std::optional<ContinueOptions> askContinueOptions(QWidget* parent, const QString& runDir, QString* error) {
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("Continue %1").arg(QFileInfo(runDir).fileName()));
  auto* form = new QFormLayout(&dialog);
  auto* epochs = new QSpinBox;
  epochs->setRange(1, 100000);
  epochs->setValue(1);
  auto* schedule = new QComboBox;
  schedule->addItem(QObject::tr("restart: the run's schedule again over the new epochs"), "restart");
  schedule->addItem(QObject::tr("constant: one learning rate"), "constant");
  auto* lr = new QLineEdit;
  lr->setPlaceholderText(QObject::tr("default: optimizer.lr (restart) or the run's last (constant)"));
  form->addRow(new QLabel(QObject::tr("Train this run further in its own folder; its curves go on.")));
  form->addRow(QObject::tr("More epochs"), epochs);
  form->addRow(QObject::tr("Learning rate"), schedule);
  form->addRow(QObject::tr("Rate"), lr);
  if (!runFormDialog(dialog, form)) return std::nullopt;
  ContinueOptions more;
  more.epochs = epochs->value();
  more.schedule.setName(schedule->currentData().toString().toStdString());
  if (!lr->text().trimmed().isEmpty()) {
    bool ok = false;
    more.lr = lr->text().trimmed().toDouble(&ok);
    if (!ok || !(more.lr > 0)) {
      *error = QObject::tr("Continue: the learning rate must be a number > 0 (got \"%1\")").arg(lr->text());
      return std::nullopt;
    }
  }
  return more;
}

}  // namespace studio::ui
