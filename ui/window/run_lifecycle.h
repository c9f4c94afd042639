#pragma once
// The live run from its start to its end, as the window shows it: which run
// is live; starting one from the form, resuming, continuing or forking one
// from its folder (each asks the trust store first); the history drawn
// under a run's first new points (a resume's, a continuation's, a fork's
// parent's); a paused run set aside while its fork trains (park) and
// brought back (unpark); and what the panels show meanwhile (the curves,
// the status bar, the toolbar, the Runs list, the locked form, the
// machine's figures). Failures are said through message().
// Thread: the UI thread.

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "studio/session.h"

namespace studio::ui {

class EvaluationPanel;
class PlotsPanel;
class PreviewCoordinator;
class RunController;
class RunStatusBar;
class RunToolBar;
class RunsPanel;
class SettingsPanel;
class SystemMonitor;
class TrustStore;

class RunLifecycle : public QObject {
  Q_OBJECT

 public:
  struct Panels {
    SettingsPanel* settings;
    PlotsPanel* plots;
    EvaluationPanel* eval;
    RunsPanel* runs;
    RunToolBar* toolbar;
    RunStatusBar* status;
  };
  // persist: the form's settings of a started run are kept in QSettings.
  RunLifecycle(RunController* controller, const Panels& panels, PreviewCoordinator* preview, TrustStore* trust,
               bool persist, QObject* parent);
  ~RunLifecycle() override;

  // Runs started here stop (with a checkpoint) after this many steps; 0: to the end.
  void setStopAtStep(int64_t step) { m_stopAtStep = step; }
  StartOptions startOptions() const;

  // The form's settings as a run (several processes through torchrun when
  // distributed.devices names more than one).
  bool startFromForm();
  // Settings from elsewhere (a queue item), trusted first.
  bool start(const TrainConfig& config);
  // A run folder: the parked run back (going on), or a resume from its checkpoint.
  bool resume(const QString& runDir);
  bool continueRun(const QString& runDir, const ContinueOptions& more);
  // From a finished run, or the live paused one (which is parked meanwhile).
  bool fork(const QString& parentDir, const ForkOptions& fork);
  // A probe on the form's settings (lr-find, batch-find): `launch` starts
  // it through the controller once the form may run.
  bool startProbe(const std::function<bool()>& launch);
  // The form may start a run: valid settings, a trusted model.
  bool formReadyToRun();

  QString liveRun() const { return m_liveRun; }
  // The live run is a probe of this kind ("lr-find", "batch-find"): the
  // status bar counts its tries, not epochs.
  void markProbe(const QString& kind);
  // The run is over: the form unlocked, the panels idle.
  void runEnded();
  // Shows these runs' curves (several: overlaid); the live run always
  // stays on screen.
  void showRuns(const QStringList& runDirs);
  // These runs were deleted: their curves go from the charts.
  void forgetRuns(const QStringList& runDirs);
  // The last failure said (a start refused, and why).
  QString lastFailure() const { return m_lastFailure; }

 Q_SIGNALS:
  void message(const QString& text, bool error);
  void titleChanged(const QString& title);

 private:
  // Starts through the controller; `history`: the run's earlier records
  // are drawn under its first new ones. Set before the start (the first
  // records may come at once), cleared when it is refused: a live run's
  // curves must never get another run's history.
  bool launch(bool history, const std::function<bool()>& start);
  bool refuse(const QString& why);
  // What every live run begins with: its key, shape and label on the
  // charts, the Runs list, the locked form, the title.
  void beginLive(const QString& runDir);
  bool unpark(const QString& runDir);
  void onStarted(const QString& runDir);
  void onRecords(const QString& runDir, const std::vector<MetricRecord>& records);
  void onStateChanged();
  void showLiveFigures();

  RunController* m_controller;
  Panels m_p;
  PreviewCoordinator* m_preview;
  TrustStore* m_trust;
  bool m_persist;
  int64_t m_stopAtStep = 0;
  QString m_liveRun;
  // The history to draw under the live run's first records: nullopt none;
  // else what is already drawn, up to this step (-1: nothing).
  std::optional<int64_t> m_history;
  QString m_lastFailure;
  std::unique_ptr<SystemMonitor> m_monitor;
};

}  // namespace studio::ui
