#pragma once
// The form's file and folder pickers: the filter for a setting's files (a
// table's, a TorchScript model's) and where a picker opens: the field's
// value when it is of the kind asked for (a file picker never opens in the
// data folder it does not want), else the last folder picked, else home.
// Thread: the UI thread.

#include <QString>

namespace studio::ui {

// "" for a folder picker.
QString pickerFilter(const QString& settingPath, bool file);
QString pickerStart(const QString& current, bool file);
// The folder of what was picked, for the next picker (QSettings).
void rememberPickerFolder(const QString& chosen, bool file);

}  // namespace studio::ui
