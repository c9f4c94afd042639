#include "ui/settings/file_pickers.h"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QSettings>

namespace studio::ui {

QString pickerFilter(const QString& path, bool file) {
  if (!file) return QString();
  const QString all = QObject::tr("All files (*)");
  if (path == "model.path") return QObject::tr("TorchScript models (*.pt *.pth *.ts *.torchscript *.jit)") + ";;" + all;
  if (path.startsWith("data.")) return QObject::tr("Tables (*.csv *.tsv *.txt)") + ";;" + all;
  return all;
}

QString pickerStart(const QString& current, bool file) {
  // Where the field's value is, when it is of the kind asked for (a file
  // picker does not open in a data folder); else the last folder picked;
  // else the home folder.
  const QFileInfo now(current);
  if (!current.isEmpty() && now.exists() && now.isDir() != file) return current;
  if (!current.isEmpty() && file && now.absoluteDir().exists() && !now.isDir()) return now.absolutePath();
  const QString last = QSettings().value("pickers/lastFolder").toString();
  return !last.isEmpty() && QFileInfo(last).isDir() ? last : QDir::homePath();
}

void rememberPickerFolder(const QString& chosen, bool file) {
  QSettings().setValue("pickers/lastFolder", file ? QFileInfo(chosen).absolutePath() : chosen);
}

}  // namespace studio::ui
