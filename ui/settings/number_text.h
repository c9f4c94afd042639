#pragma once
// How the settings form writes and reads a real number: the shortest text
// that reads back as the same double, or an exact small fraction ("4/3")
// where no short decimal is exact. Torch-free.
// Thread: any.

#include <QString>

namespace studio::ui {

QString shortest(double v);
// "1.5", or a fraction "4/3" (as shortest shows one); ok false when neither.
double realOf(const QString& text, bool* ok);

}  // namespace studio::ui
