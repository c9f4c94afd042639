#pragma once
// The Search dock: a hyperparameter search (training-studio-cli search, its
// Optuna runner in the studio's Python) started from the window, or a study
// folder opened, followed live through its study.json:
//  - the trials as a table (number, state, value, each setting), pruned and
//    failed ones marked; selecting trials selects their runs, whose curves
//    the Curves tab overlays as it does for runs;
//  - the best value so far against the trial number, each trial a dot;
//  - parallel coordinates: an axis per setting and one for the metric, each
//    trial a line coloured by its value; dragging along an axis brushes it,
//    selecting the trials whose value lies in the span;
//  - each setting's importance (Optuna's fANOVA, from the runner);
//  - Run > Join a study…: this machine's runner on a study in PostgreSQL, whose
//    trials of every machine the table lists with their machine;
//  - Stop (the trials stop with a checkpoint; Resume continues the study),
//    and Train best: the study's settings with the best trial's values, for
//    the window to start as a run.
// Thread: the UI thread.

#include <QProcess>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "studio/train_config.h"

class QCustomPlot;
class QCPItemRect;
class QCPRange;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QTemporaryFile;
class QTimer;

namespace studio::ui {

class StudyPanel : public QWidget {
  Q_OBJECT

 public:
  explicit StudyPanel(QWidget* parent = nullptr);
  ~StudyPanel() override;

  void setRunsDir(const QString& dir) { m_runsDir = dir; }
  // Starts `training-studio-cli search --config <base> --out <runs dir> args`;
  // false, said, when it cannot.
  bool start(const TrainConfig& base, const QStringList& args);
  // Continues the open study (its stopped trials resume).
  bool resume();
  // Adds this machine's runner to a study in a database (training-studio-cli
  // search --join --storage url --study name --parallel n --out <runs dir>);
  // the dock follows it as it follows a local one, each trial's machine in
  // the table.
  bool join(const QString& url, const QString& study, int parallel);
  // Run > Join a study…: asks for the URL, the study and the trials at once, then joins.
  void askToJoin();
  void stop();
  bool running() const;
  // Follows a study folder (<runs>/search-<name>) already on disk.
  void openStudy(const QString& folder);
  QString studyFolder() const { return m_folder; }
  // Reads study.json again.
  void refresh();
  const nlohmann::json& study() const { return m_study; }

  // The settings of the best trial without the trial settings; false when
  // there is none yet.
  bool bestSettings(TrainConfig& config, QString* why = nullptr) const;
  // Selects the trials whose value on parallel-coordinates axis `axis`
  // (0: the first setting; the last: the metric), scaled 0..1, is in lo..hi.
  void brush(int axis, double lo, double hi);
  QStringList selectedRunDirs() const;

  QTableWidget* trials() const { return m_table; }
  QCustomPlot* bestPlot() const { return m_best; }
  QCustomPlot* parallelPlot() const { return m_parallel; }
  QCustomPlot* importancePlot() const { return m_importance; }
  QLabel* status() const { return m_status; }

 Q_SIGNALS:
  void searchRequested();
  void runsSelected(const QStringList& dirs);
  void trainBestRequested();
  void message(const QString& text, bool error);
  void finished(int exitCode);
  // A trial's run folder appeared (its first evaluation) or its run ended:
  // the Runs list reads its folder again (issue 60: it stayed as it was
  // until the search ended).
  void trialRunsChanged();

 private:
  bool launch(const QStringList& args);
  void readOutput();
  void fillTable();
  void plotBest();
  void plotParallel();
  void plotImportance();
  // A trial's value on each parallel-coordinates axis, scaled 0..1 (NaN:
  // none); the metric's axis spans `metric`, the trials' values (metricRange).
  std::vector<double> axisValues(const nlohmann::json& trial, const QCPRange& metric) const;
  QCPRange metricRange() const;
  // The numbers of the trials selected in the table.
  std::set<int> selectedTrialNumbers() const;
  void updateButtons();

  QString m_runsDir = "runs", m_folder;
  std::set<int> m_listedTrials;  // the trials whose run the Runs list was told of (trialRunsChanged)
  // The search has written its first output (its signal handlers are in
  // place), and Stop was pressed: stop() waits for the first to signal it.
  bool m_heard = false, m_stopAsked = false;
  nlohmann::json m_study;
  std::unique_ptr<QProcess> m_process;
  std::unique_ptr<QTemporaryFile> m_baseFile;
  QByteArray m_pending;
  QTimer* m_poll;
  QLabel* m_status;
  QPushButton *m_search, *m_open, *m_stop, *m_resume, *m_trainBest;
  QTableWidget* m_table;
  QTabWidget* m_tabs;
  QCustomPlot *m_best, *m_parallel, *m_importance;
  QCPItemRect* m_brush = nullptr;
  int m_brushAxis = -1;
  double m_brushFrom = 0;
};

}  // namespace studio::ui
