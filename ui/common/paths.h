#pragma once
// A folder as the window compares them (the live run, a parked run, a probe's
// run): its absolute path.
// Thread: any.

#include <QDir>
#include <QString>

namespace studio::ui {

inline QString absolute(const QString& dir) { return QDir(dir).absolutePath(); }

}  // namespace studio::ui
