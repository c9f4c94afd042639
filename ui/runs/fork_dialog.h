#pragma once
// The Runs dock's Fork…: which checkpoint to start from, and the settings to
// change (the form's that differ from the run's, model and data left out,
// one key=value per line to edit). A change that these settings override
// (optimizer.lr under OneCycle) is noted under the edits as they are typed;
// a fork that is refused keeps the dialog open with the reason inside it, in
// the window's words, and the typed changes kept.
// Thread: the UI thread.

#include <QString>

#include <functional>
#include <optional>

#include "studio/session.h"

class QWidget;

namespace studio::ui {

// Starts the fork: empty when it started, else why not.
using TryFork = std::function<QString(const ForkOptions&)>;

// `liveStep`: the run is the live paused one, at this step (it forks from
// its current weights); -1 otherwise. The options the started fork took;
// nullopt when cancelled, or (with `error`) when the run's settings cannot
// be read.
std::optional<ForkOptions> askForkOptions(QWidget* parent, const QString& runDir, const TrainConfig& form,
                                          int64_t liveStep, const TryFork& tryFork, QString* error);

// An engine message as the window says it: the CLI's "--set key=value"
// becomes "key=value in Changes", "fork --from X" "the fork from X".
QString forkMessageInWindowWords(const QString& engineMessage);

}  // namespace studio::ui
