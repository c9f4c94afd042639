#pragma once
// A dialog of form rows: OK and Cancel under them, run modally.
// Thread: the UI thread.

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>

namespace studio::ui {

// True when the person pressed OK.
inline bool runFormDialog(QDialog& dialog, QFormLayout* form) {
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  return dialog.exec() == QDialog::Accepted;
}

}  // namespace studio::ui
