#pragma once
// A dialog of form rows: OK and Cancel under them, run modally; and, for the
// dialogs whose OK may be refused (a fork, a queue item's edit), a red label
// with the reason, the dialog kept open with what was typed.
// Thread: the UI thread.

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QString>

#include <functional>
#include <string>
#include <vector>

namespace studio::ui {

// True when the person pressed OK.
inline bool runFormDialog(QDialog& dialog, QFormLayout* form) {
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  return dialog.exec() == QDialog::Accepted;
}

// The "key=value" lines of a box of settings, trimmed, blank ones left out.
inline std::vector<std::string> settingLines(const QString& text) {
  std::vector<std::string> lines;
  for (const QString& line : text.split('\n', Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) lines.push_back(line.trimmed().toStdString());
  return lines;
}

// As runFormDialog, but OK runs `attempt`: "" closes the dialog (true), a
// reason stays in it, in a red row (object name `refusalName`) above the
// buttons, with the input kept.
inline bool runCheckedFormDialog(QDialog& dialog, QFormLayout* form, const char* refusalName,
                                 const std::function<QString()>& attempt) {
  auto* refused = new QLabel;
  refused->setObjectName(refusalName);
  refused->setWordWrap(true);
  refused->setStyleSheet("color: #d03c2f");
  refused->hide();
  form->addRow(refused);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, [&dialog, refused, attempt] {
    const QString why = attempt();
    if (why.isEmpty()) {
      dialog.accept();
      return;
    }
    refused->setText(why);
    refused->show();
  });
  return dialog.exec() == QDialog::Accepted;
}

}  // namespace studio::ui
