#pragma once
// The Runs dock's Continue…: how many more epochs, and the learning rate over
// them (the schedule again, or one rate).
// Thread: the UI thread.

#include <QString>

#include <optional>

#include "studio/session.h"

class QWidget;

namespace studio::ui {

// The person's answer; nullopt when cancelled, or (with `error`) when the
// rate is not a number > 0.
std::optional<ContinueOptions> askContinueOptions(QWidget* parent, const QString& runDir, QString* error);

}  // namespace studio::ui
