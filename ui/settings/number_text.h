#pragma once
// How the settings form writes and reads a real number: the shortest text
// that reads back as the same double, or an exact small fraction ("4/3")
// where no short decimal is exact; and any setting's value as its editor
// shows it. Torch-free.
// Thread: any.

#include <QString>

#include <nlohmann/json.hpp>

#include "studio/settings_schema.h"

namespace studio::ui {

QString shortest(double v);
// "1.5", or a fraction "4/3" (as shortest shows one); ok false when neither.
double realOf(const QString& text, bool* ok);
// A setting's value as its editor shows it: "auto" or "HxW" for a size,
// "a, b" for a list, numbers as shortest writes them.
QString valueText(const nlohmann::json& value, FieldType type);

}  // namespace studio::ui
