// The Label tab's actions on its classes and its labels file (label_panel.h):
// add and rename (or merge) a class, train on the labels, merge another
// program's edits, export the labels, choose a run for the model's jobs.
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QListWidget>

#include <exception>

#include "ui/label/box_session.h"
#include "ui/label/label_panel.h"
#include "ui/label/label_session.h"

namespace studio::ui {

void LabelPanel::addClass() {
  if (!m_editor) return;
  bool ok = false;
  const QString name =
      QInputDialog::getText(this, tr("Add class"), tr("Name of the new class:"), QLineEdit::Normal, QString(), &ok);
  if (!ok) return;
  try {
    m_editor->addClass(name);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromUtf8(e.what()), true);
  }
  refreshAll();
}

void LabelPanel::renameClass() {
  QListWidgetItem* item = m_classes->currentItem();
  if (!m_editor || !item) return;
  const QString from = item->data(Qt::UserRole).toString();
  bool ok = false;
  const QString to = QInputDialog::getText(this, tr("Rename or merge"),
                                           tr("New name for %1 (an existing class's name merges them):").arg(from),
                                           QLineEdit::Normal, from, &ok);
  if (!ok || to.trimmed() == from) return;
  try {
    const int n = m_editor->renameClass(from, to);
    Q_EMIT message(tr("%1 renamed to %2 (%n image(s) changed)", nullptr, n).arg(from, to.trimmed()), false);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromUtf8(e.what()), true);
  }
  for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
  showCurrent();
  refreshAll();
}

void LabelPanel::train() {
  if (!m_editor) return;
  try {
    const QString merged = m_editor->compact();
    if (!merged.isEmpty()) Q_EMIT message(merged, false);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The labels file could not be written: %1").arg(QString::fromUtf8(e.what())), true);
    return;
  }
  Q_EMIT trainOnLabels(m_editor->folder(), m_editor->labelsFile());
}

bool LabelPanel::mergeOutsideEdits() {
  if (!m_editor) return false;
  // The file's bytes are compared only when its time or size moved (a large COCO file is not read every 2 s).
  const QFileInfo file(m_editor->labelsFile());
  const QString stamp = file.lastModified().toString(Qt::ISODateWithMs) + QString::number(file.size());
  if (stamp == m_seen) return false;
  m_seen = stamp;
  if (!m_editor->changedOnDisk()) return false;
  try {
    Q_EMIT message(m_editor->compact(), false);
  } catch (const std::exception& e) {  // said once; the journal keeps this window's changes
    Q_EMIT message(tr("The labels file changed on the disk and could not be merged (this window's changes stay in "
                      "its journal): %1")
                       .arg(QString::fromUtf8(e.what())),
                   true);
    return false;
  }
  for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
  showCurrent();
  applyFilter();
  refreshAll();
  return true;
}

void LabelPanel::exportLabels() {
  if (!m_editor) return;
  const QStringList formats = m_editor->exportFormats();
  bool ok = true;
  const QString format = formats.size() == 1
                             ? formats.front()
                             : QInputDialog::getItem(this, tr("Export labels"), tr("Layout:"), formats, 0, false, &ok);
  if (!ok) return;
  const QString out = QFileDialog::getExistingDirectory(this, tr("A new, empty folder for the %1").arg(format));
  if (out.isEmpty()) return;
  try {
    const int64_t n = m_editor->exportLabels(format, out);
    Q_EMIT message(tr("%1 labelled images written to %2 as %3").arg(n).arg(out, format), false);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The labels were not exported: %1").arg(QString::fromUtf8(e.what())), true);
  }
}

QString LabelPanel::chooseRun() {
  QString run = m_runChooser ? m_runChooser() : QString();
  if (run.isEmpty()) run = QFileDialog::getExistingDirectory(this, tr("A trained run or export folder"));
  return run;
}

}  // namespace studio::ui
