#pragma once
// The studio's window. It assembles the panels (settings, plots, data, model,
// evaluation, runs, log, toolbar, status), the menus, and the controllers
// that do the work: the run lifecycle (run_lifecycle.h), the queue runner,
// the probe runs, the previews of the form's settings, the trust store and
// the notifier. Its public methods are the window's actions, as the menus,
// the toolbar and the tests call them.
// Thread: the UI thread.

#include <QMainWindow>
#include <QStringList>

#include <functional>

#include "studio/session.h"

class QDialog;
class QTabWidget;

namespace studio::ui {

class AuditPanel;
class LabelPanel;
class DataPanel;
class DockFit;
class EvaluationPanel;
class HelpDialog;
class LogPanel;
class LrFindDialog;
class ModelPanel;
class Notifier;
class PlotsPanel;
class PredictPanel;
class PreviewCoordinator;
class ProbeRuns;
class QueuePanel;
class StudyPanel;
class QueueRunner;
class RunController;
class RunLifecycle;
class RunStatusBar;
class RunToolBar;
class RunsPanel;
class SettingsPanel;
class TrustStore;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // restore: take geometry, last settings and view options from QSettings
  // (the application does; tests start clean).
  explicit MainWindow(const QString& presetDir, bool restore = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  SettingsPanel* settingsPanel() const { return m_settings; }
  PlotsPanel* plotsPanel() const { return m_plots; }
  DataPanel* dataPanel() const { return m_data; }
  ModelPanel* modelPanel() const { return m_model; }
  EvaluationPanel* evaluationPanel() const { return m_eval; }
  PredictPanel* predictPanel() const { return m_predict; }
  AuditPanel* auditPanel() const { return m_audit; }
  LabelPanel* labelPanel() const { return m_label; }
  QTabWidget* tabs() const { return m_tabs; }
  RunsPanel* runsPanel() const { return m_runs; }
  QueuePanel* queuePanel() const { return m_queuePanel; }
  StudyPanel* studyPanel() const { return m_study; }
  // Run > Search…: the search dialog on the form's settings, then the search.
  void openSearch();
  // A search of the form's settings with these CLI arguments (the dialog's).
  bool startSearch(const QStringList& args);
  // The Search dock's Train best: the best trial's settings into the form, started.
  bool trainBestOfStudy();
  LogPanel* logPanel() const { return m_log; }
  RunToolBar* runToolBar() const { return m_toolbar; }
  RunStatusBar* runStatusBar() const { return m_status; }
  RunController* controller() const { return m_controller; }
  DockFit* dockFit() const { return m_dockFit; }

  // Runs started from the window stop (with a checkpoint) after this many
  // steps; 0: they run to the end.
  void setStopAtStep(int64_t step);
  // As the Start button; false (with the reason shown) when it cannot.
  bool startRun();
  bool resumeRun(const QString& runDir);
  // As the Runs dock's Continue… and Fork… once their dialogs are answered.
  bool continueRun(const QString& runDir, const ContinueOptions& more);
  bool forkRun(const QString& parentDir, const ForkOptions& fork);
  // Run > Find learning rate…: opens the range-test dialog (its Start runs
  // the sweep on the current settings); the dialog, for the tests.
  LrFindDialog* openLrFind();
  bool startLrFind(const LrFindOptions& options);
  // Run > Find largest batch…: its options dialog (object name
  // "batchFindDialog", the effective batch as the largest size to try), then
  // batch-find on the current settings; at its end a message box (object
  // name "batchFindResult") offers its micro-batch and accumulation for the
  // settings. startBatchFind() takes the dialog's defaults.
  QDialog* openBatchFind();
  bool startBatchFind();
  bool startBatchFind(const BatchFindOptions& options);
  // The Runs dock's Queue and Run queue: the form's settings into the runs
  // folder's queue.json; its runs one after another (false with the reason
  // shown when it cannot start).
  bool addToQueue();
  bool runQueue();
  bool queueRunning() const;
  // Shows these runs' curves (several: overlaid).
  void showRuns(const QStringList& runDirs);
  // Writes the run's model.pt, checkpoint.ckpt, settings.json, metrics.csv and
  // every plot as PNG and PDF into outDir; the files written, or empty with
  // the error.
  QStringList exportRunTo(const QString& runDir, const QString& outDir, QString* error = nullptr,
                          const ExportOptions& options = {}, QStringList* checks = nullptr);
  // The last message shown to the person (errors included).
  QString lastMessage() const { return m_lastMessage; }
  // The size exported charts are drawn at (File > Chart export size…;
  // kept with the window's settings). Each carries its run's name and
  // settings under it.
  void setChartExportSize(const QSize& size);
  QSize chartExportSize() const { return m_chartExportSize; }
  // File > Load settings… once a file is chosen: false when it cannot be
  // read or is not valid settings, said in a dialog (object name
  // "failureDialog"), the status bar and the log (as an error).
  bool loadSettingsFile(const QString& path);
  // The command line's settings: --config FILE or --preset NAME when given
  // (else the settings the window opened on: the remembered ones, or the
  // default preset), then each --set KEY=VALUE. false with why when one of
  // them cannot be read; the form is then as it was.
  bool openWith(const QString& preset, const QString& configFile, const QStringList& sets, QString* why);

  // Asked before a run loads a TorchScript file not trusted yet (its code
  // runs): true to go on. The default asks the person in a dialog; tests
  // answer for them.
  using TrustPrompt = std::function<bool(const QString& path, const QString& sha256)>;
  void setTrustPrompt(TrustPrompt prompt);
  bool isTrusted(const QString& sha256) const;
  // The data check of the current settings has finished (for tests).
  bool dataChecked() const;
  // The last desktop notification (a run ended or failed, its loss diverging):
  // its title, also when the window was active and nothing popped up.
  // View > Desktop notifications turns them off.
  QString lastNotification() const;
  // Sizes and places the window inside `available` (a screen's available
  // geometry: the desktop less its panels), a window manager's frame
  // included; a saved geometry too large for it, or off it, is brought in.
  // The window does this with its screen's on opening.
  void fitWithin(const QRect& available);
  // Help > Guide: the short guide to the charts, the controls and the
  // shortcuts, with links to the user guide's sections (object name "guide").
  HelpDialog* openGuide();

 Q_SIGNALS:
  void runFinished(const studio::RunSummary& summary);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void connectPanels();
  void onRunFinished(const RunSummary& summary);
  void showMessage(const QString& text, bool error = false);
  void showFailure(const QString& title, const QString& text);
  void exportSelectedRun(const QString& runDir);
  void askContinue(const QString& runDir);
  void askFork(const QString& runDir);
  void loadLastSettings(const QString& presetDir);
  QString m_presetDir;
  void saveWindowState();
  void restoreWindowState();

  SettingsPanel* m_settings;
  QTabWidget* m_tabs;
  PlotsPanel* m_plots;
  DataPanel* m_data;
  ModelPanel* m_model;
  EvaluationPanel* m_eval;
  PredictPanel* m_predict;
  AuditPanel* m_audit;
  LabelPanel* m_label;
  RunsPanel* m_runs;
  QueuePanel* m_queuePanel;
  StudyPanel* m_study;
  LogPanel* m_log;
  RunToolBar* m_toolbar;
  RunStatusBar* m_status;
  RunController* m_controller;
  TrustStore* m_trust;
  PreviewCoordinator* m_preview;
  RunLifecycle* m_lifecycle;
  QueueRunner* m_queue;
  ProbeRuns* m_probes;
  Notifier* m_notifier;
  DockFit* m_dockFit;
  QString m_lastMessage;
  // The form's output.dir the Runs list last followed: the list follows a
  // change of it, not every edit of the form (a folder opened from Recent
  // runs or --compare stays shown while another field changes).
  QString m_formRunsDir;
  QSize m_chartExportSize{1200, 700};
  bool m_restore;
};

}  // namespace studio::ui
