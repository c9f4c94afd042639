#pragma once
// The window's probe runs on the form's settings: Run > Find learning
// rate… (the range-test dialog, fed the sweep's records, its Use setting
// the rate in the form) and Run > Find largest batch… (its options in a
// dialog, object name "batchFindDialog"; at its end a message box, object
// name "batchFindResult", offers its micro-batch and accumulation for the
// form). A probe is no training run: the status bar counts its tries and
// its end is said as the probe's answer.
// Thread: the UI thread.

#include <QObject>
#include <QString>

#include <vector>

#include "studio/session.h"

class QDialog;
class QWidget;

namespace studio::ui {

class LrFindDialog;
class RunController;
class RunLifecycle;
class SettingsPanel;

class ProbeRuns : public QObject {
  Q_OBJECT

 public:
  ProbeRuns(RunController* controller, RunLifecycle* lifecycle, SettingsPanel* settings, QWidget* dialogParent);

  // The range-test dialog (made once; its Start runs the sweep).
  LrFindDialog* openLrFind();
  bool startLrFind(const LrFindOptions& options);
  // Run > Find largest batch…: the options dialog (made on each call; its
  // OK starts the probe). The largest size offered is the effective batch.
  QDialog* openBatchFind();
  BatchFindOptions batchFindDefaults() const;
  bool startBatchFind(const BatchFindOptions& options);
  // A run ended: a probe's result for the person; what to say of its end
  // when it was a probe, else "".
  QString runEnded(const RunSummary& summary);

 Q_SIGNALS:
  void message(const QString& text, bool error);

 private:
  void offerBatch(const RunSummary& s);

  RunController* m_controller;
  RunLifecycle* m_lifecycle;
  SettingsPanel* m_settings;
  QWidget* m_dialogParent;
  LrFindDialog* m_lrFind = nullptr;
  QString m_lrFindRun;     // the sweep's run folder while it runs
  QString m_batchFindRun;  // batch-find's run folder while it runs
};

}  // namespace studio::ui
