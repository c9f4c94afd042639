#pragma once
// The list of runs on disk (name, date, status, best accuracy, steps, model,
// device, a fork's parent and changed settings) and the queue's runs not yet
// started. Selecting runs asks for their curves (several: overlaid); a
// stopped run can be resumed, any run continued, forked or exported, and the
// form's settings queued from here. Runs that failed before their first step
// are hidden unless asked for.
// Thread: the UI thread.

#include <QStringList>
#include <QWidget>

class QCheckBox;
class QPushButton;
class QTreeWidget;

namespace studio::ui {

class RunsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunsPanel(QWidget* parent = nullptr);

  void setRunsDir(const QString& dir);
  QString runsDir() const { return m_dir; }
  // The run the window is training now (shown as running).
  void setLiveRun(const QString& dir);
  // The live run is paused (it can be forked from its current weights), and
  // the run set aside paused while its fork trains (shown as paused).
  void setLivePaused(bool paused);
  void setParkedRun(const QString& dir);
  void refresh();
  int runCount() const;
  QStringList selectedRuns() const;
  // Selects these runs (and shows them).
  void selectRuns(const QStringList& dirs);
  QTreeWidget* list() const { return m_list; }
  // The queue file of this runs folder (training-studio-cli queue uses the same).
  QString queueFile() const { return m_dir + "/queue.json"; }
  // Rows of queued runs (not started yet) shown under the runs.
  int queuedCount() const { return m_queued; }

 Q_SIGNALS:
  void showRequested(const QStringList& dirs);
  void resumeRequested(const QString& dir);
  void continueRequested(const QString& dir);
  void forkRequested(const QString& dir);
  void queueAddRequested();
  void queueRunRequested();
  void exportRequested(const QString& dir);

 private:
  void updateButtons();

  QString m_dir;
  QString m_live;
  bool m_livePaused = false;
  QString m_parked;
  QTreeWidget* m_list;
  QPushButton* m_resume;
  QPushButton* m_continue;
  QPushButton* m_fork;
  QPushButton* m_queueAdd;
  QPushButton* m_queueRun;
  QCheckBox* m_showFailedEarly;
  QPushButton* m_export;
  bool m_filling = false;
  int m_queued = 0;
};

}  // namespace studio::ui
