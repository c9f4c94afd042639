#pragma once
// The Runs dock's Fork…: which checkpoint to start from, and the settings to
// change (the form's that differ from the run's, model and data left out,
// one key=value per line to edit).
// Thread: the UI thread.

#include <QString>

#include <optional>

#include "studio/session.h"

class QWidget;

namespace studio::ui {

// `liveStep`: the run is the live paused one, at this step (it forks from
// its current weights); -1 otherwise. nullopt when cancelled, or (with
// `error`) when the run's settings cannot be read.
std::optional<ForkOptions> askForkOptions(QWidget* parent, const QString& runDir, const TrainConfig& form,
                                          int64_t liveStep, QString* error);

}  // namespace studio::ui
