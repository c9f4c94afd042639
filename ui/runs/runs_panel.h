#pragma once
// The list of runs on disk (name, date, status, best accuracy, steps, model,
// device, a fork's parent and changed settings) and the queue's runs not yet
// started. Selecting runs asks for their curves (several: overlaid); a
// stopped run can be resumed, any run continued, forked or exported, and the
// form's settings queued from here. Runs that failed before their first step
// are hidden unless asked for.
// Columns: the fixed ones, the person's tags, then every setting whose value
// differs between the runs listed; a click on a header sorts by it (numbers
// as numbers). Runs can be given a title, tags and notes, compared setting
// by setting, and deleted to the desktop's trash (undoable).
// Thread: the UI thread.

#include <QStringList>
#include <QWidget>

#include <vector>

class QCheckBox;
class QDialog;
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
  // The live run's position, as the engine reports it: its row's Steps
  // follow (its summary comes only at its end), and a live run not listed
  // yet (its folder had no settings.json at the start) is listed.
  void setLiveProgress(int64_t step, int64_t totalSteps);
  // The text of a run's cell in the list ("" when the run is not listed);
  // column: the header's label ("Steps", "Status", ...).
  QString cellText(const QString& runDir, const QString& column) const;
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
  // The settings shown as columns: those that differ between the runs listed.
  QStringList settingColumns() const { return m_settingColumns; }

  // Delete…: the selected runs to the desktop's trash (not the live or the
  // paused one); Undo delete brings the last ones back. False with the
  // reason when it cannot (nothing is lost then).
  bool deleteSelected(QString* error = nullptr);
  bool undoDelete(QString* error = nullptr);
  bool canUndoDelete() const { return !m_deleted.empty(); }
  // Notes…: the run's own title (shown instead of its name), tags and notes.
  bool setRunNotes(const QString& dir, const QString& title, const QStringList& tags, const QString& notes,
                   QString* error = nullptr);
  // Compare settings…: the dialog (object name "settingsDiff") listing the
  // settings that differ between the selected runs, one column per run.
  QDialog* compareSelected();

 Q_SIGNALS:
  void showRequested(const QStringList& dirs);
  void resumeRequested(const QString& dir);
  void continueRequested(const QString& dir);
  void forkRequested(const QString& dir);
  void queueAddRequested();
  void queueRunRequested();
  void exportRequested(const QString& dir);
  // These runs' folders went to the trash: nothing of them stays drawn.
  void runsDeleted(const QStringList& dirs);
  // What a delete, an undo or a notes edit did, or why it could not.
  void message(const QString& text, bool error);

 private:
  void updateButtons();
  // The live run's folder is in the runs folder listed (else it is not listed).
  bool liveInThisFolder() const;
  void editNotes(const QString& dir);
  struct Deleted {
    QString original;
    QString inTrash;
  };

  QString m_dir;
  QString m_live;
  bool m_liveHasSettings = false;  // its row was filled from its settings.json
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
  QPushButton* m_delete;
  QPushButton* m_undoDelete;
  QPushButton* m_notes;
  QPushButton* m_compare;
  bool m_filling = false;
  int m_queued = 0;
  QStringList m_settingColumns;
  std::vector<std::vector<Deleted>> m_deleted;  // each delete's runs, the last one last
};

}  // namespace studio::ui
