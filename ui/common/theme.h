#pragma once
// Light, dark or the desktop's own palette for the whole application; the
// charts follow the palette they are given.
// Thread: the UI thread.

#include <QString>

namespace studio::ui {

enum class Theme { System, Light, Dark };

void applyTheme(Theme theme);
Theme themeFromName(const QString& name);
QString themeName(Theme theme);

}  // namespace studio::ui
