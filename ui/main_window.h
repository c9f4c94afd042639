#pragma once
// The studio's window. It only assembles the panels (settings, plots, run
// controls, runs, log, status) and connects them to the run controller; each
// panel is its own class.
// Thread: the UI thread.

#include <QMainWindow>
#include <QSet>
#include <QStringList>

#include <functional>
#include <memory>

#include "studio/model_summary.h"
#include "studio/run_queue.h"
#include "studio/session.h"
#include "ui/background_job.h"
#include "ui/data_preview.h"

class QAction;
class QSystemTrayIcon;
class QTabWidget;
class QTimer;

namespace studio::ui {

class DataPanel;
class EvaluationPanel;
class HelpDialog;
class LogPanel;
class LrFindDialog;
class ModelPanel;
class PlotsPanel;
class RunController;
class RunStatusBar;
class RunToolBar;
class RunsPanel;
class SettingsPanel;
class SystemMonitor;
struct RunInfo;
struct RunShape;

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
  QTabWidget* tabs() const { return m_tabs; }
  RunsPanel* runsPanel() const { return m_runs; }
  LogPanel* logPanel() const { return m_log; }
  RunToolBar* runToolBar() const { return m_toolbar; }
  RunStatusBar* runStatusBar() const { return m_status; }
  RunController* controller() const { return m_controller; }

  // Runs started from the window stop (with a checkpoint) after this many
  // steps; 0: they run to the end.
  void setStopAtStep(int64_t step) { m_stopAtStep = step; }
  // As the Start button; false (with the reason shown) when it cannot.
  bool startRun();
  bool resumeRun(const QString& runDir);
  // As the Runs dock's Continue… and Fork… once their dialogs are answered.
  bool continueRun(const QString& runDir, const ContinueOptions& more);
  bool forkRun(const QString& parentDir, const ForkOptions& fork);
  // The Runs dock's Queue and Run queue: the form's settings into the runs
  // folder's queue.json; its runs one after another (false with the reason
  // shown when it cannot start).
  // Run > Find learning rate…: opens the range-test dialog (its Start runs
  // the sweep on the current settings); the dialog, for the tests.
  LrFindDialog* openLrFind();
  bool startLrFind(const LrFindOptions& options);
  // Run > Find largest batch…: batch-find on the current settings; at its end
  // a message box (object name "batchFindResult") offers its micro-batch and
  // accumulation for the settings.
  bool startBatchFind();
  bool addToQueue();
  bool runQueue();
  bool queueRunning() const { return m_queueRunner != nullptr; }
  // Shows these runs' curves (several: overlaid).
  void showRuns(const QStringList& runDirs);
  // Writes the run's model.pt, checkpoint.ckpt, settings.json, metrics.csv and
  // every plot as PNG and PDF into outDir; the files written, or empty with
  // the error.
  QStringList exportRunTo(const QString& runDir, const QString& outDir, QString* error = nullptr);
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

  // Asked before a run loads a TorchScript file not trusted yet (its code
  // runs): true to go on. The default asks the person in a dialog; tests
  // answer for them.
  using TrustPrompt = std::function<bool(const QString& path, const QString& sha256)>;
  void setTrustPrompt(TrustPrompt prompt) { m_trustPrompt = std::move(prompt); }
  bool isTrusted(const QString& sha256) const { return m_trusted.contains(sha256); }
  // The data check of the current settings has finished (for tests).
  bool dataChecked() const;
  // The last desktop notification (a run ended or failed, its loss diverging):
  // its title, also when the window was active and nothing popped up.
  // View > Desktop notifications turns them off.
  QString lastNotification() const { return m_lastNotification; }
  // Help > Guide: the short guide to the charts, the controls and the
  // shortcuts, with links to the README's sections (object name "guide").
  HelpDialog* openGuide();

 Q_SIGNALS:
  void runFinished(const studio::RunSummary& summary);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void connectPanels();
  void updateSchedulePreview();
  void checkData(bool force = false);
  void onDataPreview(const QString& key, const DataPreview& preview);
  void updateModelSummary();
  bool ensureTrusted(const TrainConfig& config);
  bool formReadyToRun();
  void trust(const QString& sha256);
  void onRecords(const QString& runDir, const std::vector<MetricRecord>& records);
  void onRunFinished(const RunSummary& summary);
  void onStateChanged();
  void showMessage(const QString& text, bool error = false);
  void showFailure(const QString& title, const QString& text);
  // A desktop notification (the tray's message and the taskbar's alert) when
  // the window is not the one in use.
  void notify(const QString& title, const QString& text, bool failure);
  void exportSelectedRun(const QString& runDir);
  void askContinue(const QString& runDir);
  void askFork(const QString& runDir);
  void startNextQueued();
  // Asks about a run folder's TorchScript file as a start would (true when
  // its settings are unreadable: the session then says why).
  bool trustsRunFolder(const QString& runDir);
  StartOptions windowStartOptions() const;
  void endQueue(const QString& message, bool error = false);
  void saveWindowState();
  // How the run's steps translate into epochs and samples, for the x-axis.
  RunShape liveShape(const RunInfo& info) const;
  void restoreWindowState();

  QString m_presetDir;
  SettingsPanel* m_settings;
  QTabWidget* m_tabs;
  PlotsPanel* m_plots;
  DataPanel* m_data;
  ModelPanel* m_model;
  EvaluationPanel* m_eval;
  RunsPanel* m_runs;
  LogPanel* m_log;
  RunToolBar* m_toolbar;
  RunStatusBar* m_status;
  RunController* m_controller;
  QTimer* m_previewTimer;
  int64_t m_stopAtStep = 0;
  QString m_liveRun;
  bool m_liveResumed = false;
  int64_t m_resumeDrawnUpTo = -1;  // a resume's history already drawn, up to this step
  // Running the queue: its runner lock and the item now running (0: none).
  std::unique_ptr<QueueRunnerLock> m_queueRunner;
  int64_t m_queueItem = 0;
  QString m_lastMessage;
  QString m_lastNotification;
  QAction* m_notifyAction = nullptr;
  QSystemTrayIcon* m_tray = nullptr;
  std::unique_ptr<SystemMonitor> m_monitor;
  QSize m_chartExportSize{1200, 700};
  LrFindDialog* m_lrFind = nullptr;
  QString m_lrFindRun;  // the sweep's run folder while it runs
  QString m_batchFindRun;  // batch-find's run folder while it runs
  bool m_restore;
  BackgroundJob<DataPreview> m_dataJob;
  BackgroundJob<std::pair<ModelSummary, QString>> m_modelJob;
  QString m_previewKey;       // the data settings of the preview shown (or under way)
  bool m_previewDone = false;
  DataPreview m_preview;
  QString m_modelKey;
  QSet<QString> m_trusted;    // SHA-256 of TorchScript files the person trusted
  TrustPrompt m_trustPrompt;
};

}  // namespace studio::ui
