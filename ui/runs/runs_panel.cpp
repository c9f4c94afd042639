#include "ui/runs/runs_panel.h"

#include <QAction>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

#include "studio/run_layout.h"
#include "studio/run_queue.h"
#include "studio/settings_schema.h"
#include "ui/runs/run_catalog.h"

namespace studio::ui {
namespace {
constexpr int kProbeRole = Qt::UserRole + 1;  // the Steps cell: the row is a probe's
}  // namespace

namespace {
enum Column { Name, Date, Status, Best, Steps, Model, Device, Parent, Changed, Tags, Labels, Columns };

// Sorted by the clicked column: numbers as numbers ("85.20 %", "120 / 400",
// a learning rate), anything else as text.
class RunItem : public QTreeWidgetItem {
 public:
  using QTreeWidgetItem::QTreeWidgetItem;
  bool operator<(const QTreeWidgetItem& other) const override {
    const int column = treeWidget() ? treeWidget()->sortColumn() : 0;
    bool a = false, b = false;
    const double x = text(column).section(' ', 0, 0).toDouble(&a);
    const double y = other.text(column).section(' ', 0, 0).toDouble(&b);
    if (a && b) return x < y;
    if (a != b) return a;  // numbers before blanks and words
    return QTreeWidgetItem::operator<(other);
  }
};
}  // namespace

RunsPanel::RunsPanel(QWidget* parent)
    : QWidget(parent),
      m_list(new QTreeWidget),
      m_resume(new QPushButton(tr("Resume"))),
      m_continue(new QPushButton(tr("Continue…"))),
      m_fork(new QPushButton(tr("Fork…"))),
      m_queueAdd(new QPushButton(tr("Queue"))),
      m_queueRun(new QPushButton(tr("Run queue"))),
      m_showFailedEarly(new QCheckBox(tr("Show runs that failed before training"))),
      m_export(new QPushButton(tr("Export…"))),
      m_delete(new QPushButton(tr("Delete"))),
      m_undoDelete(new QPushButton(tr("Undo delete"))),
      m_notes(new QPushButton(tr("Notes…"))),
      m_compare(new QPushButton(tr("Compare settings…"))) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  top->setSpacing(3);
  m_list->setObjectName("runsList");
  m_list->setColumnCount(Columns);
  m_list->setHeaderLabels({tr("Run"), tr("Started"), tr("Status"), tr("Best"), tr("Steps"), tr("Model"), tr("Device"),
                           tr("Parent"), tr("Changed"), tr("Tags"), tr("Labels")});
  m_list->headerItem()->setToolTip(Labels, tr("The labelled images a run on a labels file (the Label tab's) had"));
  m_list->setSortingEnabled(true);
  m_list->sortByColumn(Date, Qt::DescendingOrder);
  m_list->header()->setSortIndicatorShown(true);
  m_list->setRootIsDecorated(false);
  m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_list->setAlternatingRowColors(true);
  m_list->setToolTip(tr("Select a run to draw its curves; select several (Ctrl/Shift) to compare them."));
  m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  top->addWidget(m_list, 1);
  m_showFailedEarly->setObjectName("showFailedEarly");
  m_showFailedEarly->setToolTip(
      tr("Runs that failed before their first step (bad data, settings or model) keep "
         "their folder with the error, and are hidden unless this is on."));
  connect(m_showFailedEarly, &QCheckBox::toggled, this, &RunsPanel::refresh);
  auto* bar = new QHBoxLayout;
  auto* refresh = new QPushButton(tr("Refresh"));
  m_resume->setObjectName("resumeRun");
  m_continue->setObjectName("continueRun");
  m_fork->setObjectName("forkRun");
  m_fork->setToolTip(
      tr("Start a new run from one of the selected run's checkpoints with edited settings "
         "(learning rate, schedule, precision, batch, epochs...); the model and data stay."));
  m_queueAdd->setObjectName("queueAdd");
  m_queueAdd->setToolTip(
      tr("Add the settings in the form to this runs folder's queue (queue.json); grids of "
         "values: training-studio-cli queue add --grid key=v1,v2"));
  m_queueRun->setObjectName("queueRun");
  m_queueRun->setToolTip(tr("Run the queued runs one after another (a run left unfinished is resumed first)."));
  m_export->setObjectName("exportRun");
  m_export->setToolTip(tr("Write the selected run's checkpoint, model.pt, settings, metrics and plots to a folder."));
  bar->addWidget(refresh);
  bar->addWidget(m_queueAdd);
  bar->addWidget(m_queueRun);
  bar->addStretch(1);
  bar->addWidget(m_resume);
  bar->addWidget(m_continue);
  bar->addWidget(m_fork);
  bar->addWidget(m_export);
  top->addLayout(bar);
  // The second row: what a person does to the runs themselves.
  auto* manage = new QHBoxLayout;
  m_notes->setObjectName("runNotes");
  m_notes->setToolTip(
      tr("Give the selected run a title (shown instead of its name), tags and notes (kept in its "
         "notes.json)."));
  m_compare->setObjectName("compareSettings");
  m_compare->setToolTip(tr("The settings that differ between the selected runs, side by side."));
  m_delete->setObjectName("deleteRuns");
  m_delete->setToolTip(tr("Move the selected runs' folders to the desktop's trash (Undo delete brings them back)."));
  m_undoDelete->setObjectName("undoDelete");
  m_undoDelete->setToolTip(tr("Bring the last deleted runs back from the trash."));
  manage->addWidget(m_notes);
  manage->addWidget(m_compare);
  manage->addWidget(m_showFailedEarly);  // on this row: the list keeps a row more at 720 px (issue 40, item 9)
  manage->addStretch(1);
  manage->addWidget(m_delete);
  manage->addWidget(m_undoDelete);
  top->addLayout(manage);
  auto* deleteKey = new QAction(this);
  deleteKey->setShortcut(QKeySequence::Delete);
  deleteKey->setShortcutContext(Qt::WidgetShortcut);
  m_list->addAction(deleteKey);
  connect(deleteKey, &QAction::triggered, m_delete, &QPushButton::click);
  connect(m_delete, &QPushButton::clicked, this, [this] {
    if (m_delete->isEnabled()) deleteSelected();
  });
  connect(m_undoDelete, &QPushButton::clicked, this, [this] { undoDelete(); });
  connect(m_notes, &QPushButton::clicked, this, [this] {
    if (selectedRuns().size() == 1) editNotes(selectedRuns().front());
  });
  connect(m_compare, &QPushButton::clicked, this, [this] { compareSelected(); });

  connect(refresh, &QPushButton::clicked, this, &RunsPanel::refresh);
  connect(m_list, &QTreeWidget::itemSelectionChanged, this, [this] {
    updateButtons();
    if (!m_filling && !selectedRuns().isEmpty()) Q_EMIT showRequested(selectedRuns());
  });
  connect(m_resume, &QPushButton::clicked, this, [this] {
    if (selectedRuns().size() == 1) Q_EMIT resumeRequested(selectedRuns().front());
  });
  connect(m_continue, &QPushButton::clicked, this, [this] {
    if (selectedRuns().size() == 1) Q_EMIT continueRequested(selectedRuns().front());
  });
  connect(m_fork, &QPushButton::clicked, this, [this] {
    if (selectedRuns().size() == 1) Q_EMIT forkRequested(selectedRuns().front());
  });
  connect(m_queueAdd, &QPushButton::clicked, this, &RunsPanel::queueAddRequested);
  connect(m_queueRun, &QPushButton::clicked, this, &RunsPanel::queueRunRequested);
  connect(m_export, &QPushButton::clicked, this, [this] {
    if (selectedRuns().size() == 1) Q_EMIT exportRequested(selectedRuns().front());
  });
  updateButtons();
}

void RunsPanel::setRunsDir(const QString& dir) {
  if (QDir(dir).absolutePath() == QDir(m_dir).absolutePath() && !m_dir.isEmpty()) return;
  m_dir = dir;
  refresh();
}

void RunsPanel::setLiveRun(const QString& dir) {
  const QString was = m_live;
  m_live = dir.isEmpty() ? QString() : QDir(dir).absolutePath();
  refresh();
  if (m_live.isEmpty() || m_live == was) return;
  // The charts show the new live run: the highlight moves to it (the charts
  // already show it, so nothing is asked to be shown).
  m_filling = true;
  m_list->clearSelection();
  for (int i = 0; i < m_list->topLevelItemCount(); ++i)
    if (QTreeWidgetItem* item = m_list->topLevelItem(i); item->data(Name, Qt::UserRole).toString() == m_live) {
      item->setSelected(true);
      m_list->scrollToItem(item);
    }
  m_filling = false;
  updateButtons();
}

void RunsPanel::setLiveProgress(int64_t step, int64_t totalSteps) {
  if (m_live.isEmpty()) return;
  auto liveItem = [this]() -> QTreeWidgetItem* {
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
      if (m_list->topLevelItem(i)->data(Name, Qt::UserRole).toString() == m_live) return m_list->topLevelItem(i);
    return nullptr;
  };
  QTreeWidgetItem* item = liveItem();
  if (liveInThisFolder() && (!item || (!m_liveHasSettings && QFile::exists(m_live + "/" + run_files::kSettings)))) {
    refresh();
    item = liveItem();
  }
  if (!item || totalSteps <= 0 || item->data(Steps, kProbeRole).toBool()) return;
  const QString text = QString("%1 / %2").arg(step).arg(totalSteps);
  if (item->text(Steps) != text) item->setText(Steps, text);
}

bool RunsPanel::liveInThisFolder() const {
  return !m_live.isEmpty() && QFileInfo(m_live).absolutePath() == QDir(m_dir).absolutePath();
}

QString RunsPanel::cellText(const QString& runDir, const QString& column) const {
  int c = 0;
  while (c < m_list->columnCount() && m_list->headerItem()->text(c) != column) ++c;
  for (int i = 0; i < m_list->topLevelItemCount(); ++i)
    if (QDir(m_list->topLevelItem(i)->data(Name, Qt::UserRole).toString()) == QDir(runDir))
      return c < m_list->columnCount() ? m_list->topLevelItem(i)->text(c) : QString();
  return QString();
}

void RunsPanel::setLivePaused(bool paused) {
  if (paused == m_livePaused) return;
  m_livePaused = paused;
  refresh();
}

void RunsPanel::setParkedRun(const QString& dir) {
  m_parked = dir.isEmpty() ? QString() : QDir(dir).absolutePath();
  refresh();
}

void RunsPanel::refresh() {
  const QStringList selected = selectedRuns();
  m_filling = true;
  m_list->setSortingEnabled(false);
  m_list->clear();
  std::vector<RunInfo> runs;
  bool liveListed = false;
  for (RunInfo& run : listRuns(m_dir)) {
    const bool live = run.dir == m_live;
    liveListed = liveListed || live;
    if (!live && run.ended == RunStatus::failed && run.steps == 0 && !m_showFailedEarly->isChecked()) continue;
    runs.push_back(std::move(run));
  }
  // The live run before its thread wrote its settings.json.
  if (!liveListed && liveInThisFolder()) runs.insert(runs.begin(), readRunInfo(m_live));
  m_liveHasSettings = !m_live.isEmpty() && QFile::exists(m_live + "/" + run_files::kSettings);
  // A column for each setting that differs between the runs listed.
  m_settingColumns = runs.size() > 1 ? differingSettings(runs) : QStringList();
  QStringList headers;
  for (int c = 0; c < Columns; ++c) headers << m_list->headerItem()->text(c);
  m_list->setColumnCount(Columns + static_cast<int>(m_settingColumns.size()));
  m_list->setHeaderLabels(headers + m_settingColumns);
  // The Labels column where a listed run trained on a labels file only.
  m_list->setColumnHidden(Labels,
                          std::none_of(runs.begin(), runs.end(), [](const RunInfo& r) { return r.labels >= 0; }));
  for (const RunInfo& run : runs) {
    const bool live = run.dir == m_live;
    auto* item = new RunItem(m_list);
    item->setData(Name, Qt::UserRole, run.dir);
    item->setText(Name, !run.title.isEmpty() ? run.title : run.name.isEmpty() ? run.folderName : run.name);
    item->setToolTip(Name, run.notes.isEmpty() ? run.dir : run.dir + "\n\n" + run.notes);
    item->setText(Tags, run.tags.join(", "));
    if (run.labels >= 0) item->setData(Labels, Qt::DisplayRole, run.labels);
    for (int i = 0; i < m_settingColumns.size(); ++i)
      item->setText(Columns + i, run.settings.value(m_settingColumns[i]));
    item->setText(Date, run.started.toString("yyyy-MM-dd HH:mm:ss"));
    const bool parked = run.dir == m_parked;
    // A search's pruned trial: stopped by its pruner, resumable as any stopped run.
    const QString status = run.pruned && run.ended == RunStatus::stopped ? tr("pruned") : run.status;
    item->setText(Status, live     ? (m_livePaused ? tr("paused") : tr("running"))
                          : parked ? tr("paused (its fork trains)")
                                   : status);
    if (!run.error.isEmpty())
      item->setToolTip(Status, run.error);
    else if (!run.trial.isEmpty())
      item->setToolTip(Status, run.trial + (run.pruned ? tr(": its pruner stopped it; "
                                                            "Resume continues it")
                                                       : ""));
    item->setText(Best, bestText(run));
    item->setToolTip(Best, testFiguresText(run));
    item->setData(Steps, kProbeRole, !run.probe.isEmpty());
    if (!run.probe.isEmpty())  // a probe's steps are tries, not the settings' plan
      item->setText(Steps, run.probe);
    else if (run.totalSteps > 0 || run.steps > 0)
      item->setText(Steps, QString("%1 / %2").arg(run.steps).arg(run.totalSteps));
    item->setText(Model, run.model);
    item->setText(Device, run.device);
    if (!run.parentDir.isEmpty()) {
      item->setText(Parent, tr("%1 @ step %2").arg(QFileInfo(run.parentDir).fileName()).arg(run.parentStep));
      item->setToolTip(Parent, run.parentDir);
      item->setText(Changed, run.changed.isEmpty() ? tr("(nothing)") : run.changed.join("; "));
      item->setToolTip(Changed, run.changed.join("\n"));
    }
    if (run.continuations > 0)
      item->setText(Steps, item->text(Steps) + tr(" (continued %n time(s))", nullptr, run.continuations));
    item->setData(Status, Qt::UserRole, (run.resumable && !live) || parked);
    item->setData(Steps, Qt::UserRole, run.hasCheckpoint && !live && !parked);
    item->setData(Date, Qt::UserRole, (run.hasCheckpoint && !live && !parked) || (live && m_livePaused));
    if (selected.contains(run.dir)) item->setSelected(true);
  }
  // The queue's runs not started yet, greyed, below the runs.
  m_queued = 0;
  std::vector<QueueItem> queue;
  QString queueProblem;
  try {
    queue = loadQueue(queueFile().toStdString());
  } catch (const std::exception& e) {
    queueProblem = QString::fromStdString(e.what());
  }
  for (const QueueItem& q : queue) {
    if (q.status != QueueStatus::queued) continue;
    auto* item = new RunItem(m_list);
    item->setText(Name, QString::fromStdString(q.label.empty() ? q.config.name : q.config.name + " (" + q.label + ")"));
    item->setText(Status, tr("queued"));
    item->setText(Model, modelText(QString::fromStdString(q.config.model.kind), q.config.model.width,
                                   q.config.model.depth, QString::fromStdString(q.config.model.path)));
    item->setFlags(Qt::ItemIsEnabled);  // nothing to draw yet
    for (int c = 0; c < Columns; ++c) item->setForeground(c, palette().color(QPalette::Disabled, QPalette::Text));
    ++m_queued;
  }
  if (!queueProblem.isEmpty()) {
    auto* item = new RunItem(m_list);
    item->setText(Name, tr("queue.json"));
    item->setText(Status, tr("unreadable"));
    item->setToolTip(Status, queueProblem);
    item->setFlags(Qt::ItemIsEnabled);
  }
  m_list->setSortingEnabled(true);
  m_filling = false;
  updateButtons();
}

int RunsPanel::runCount() const {
  int n = 0;
  for (int i = 0; i < m_list->topLevelItemCount(); ++i)
    if (!m_list->topLevelItem(i)->data(Name, Qt::UserRole).toString().isEmpty()) ++n;
  return n;
}

QStringList RunsPanel::selectedRuns() const {
  QStringList dirs;
  for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = m_list->topLevelItem(i);
    if (item->isSelected()) dirs << item->data(Name, Qt::UserRole).toString();
  }
  return dirs;
}

void RunsPanel::selectRuns(const QStringList& dirs) {
  QStringList absolute;
  for (const QString& d : dirs) absolute << QDir(d).absolutePath();
  m_filling = true;
  m_list->clearSelection();
  for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = m_list->topLevelItem(i);
    if (absolute.contains(item->data(Name, Qt::UserRole).toString())) item->setSelected(true);
  }
  m_filling = false;
  updateButtons();
  if (!selectedRuns().isEmpty()) Q_EMIT showRequested(selectedRuns());
}

void RunsPanel::updateButtons() {
  const auto items = m_list->selectedItems();
  // One run trains at a time: while one is live, no other can be resumed or
  // continued (the button says so instead of refusing after the click).
  const bool busy = !m_live.isEmpty();
  m_resume->setEnabled(!busy && items.size() == 1 && items.front()->data(Status, Qt::UserRole).toBool());
  m_export->setEnabled(items.size() == 1);
  const bool branchable = items.size() == 1 && items.front()->data(Steps, Qt::UserRole).toBool();
  m_continue->setEnabled(!busy && branchable);
  const QString why = tr("A run is going; stop it (or let it finish) first.");
  m_resume->setToolTip(busy ? why : tr("Continue the selected stopped run from its last checkpoint."));
  m_continue->setToolTip(busy ? why
                              : tr("Train the selected run more epochs in its own folder, its history kept "
                                   "(the schedule again over them, or one learning rate)."));
  m_fork->setEnabled(items.size() == 1 && items.front()->data(Date, Qt::UserRole).toBool());
  // The live run and the one paused for its fork stay.
  bool deletable = !items.isEmpty();
  for (QTreeWidgetItem* item : items) {
    const QString dir = item->data(Name, Qt::UserRole).toString();
    if (dir.isEmpty() || dir == m_live || dir == m_parked) deletable = false;
  }
  m_delete->setEnabled(deletable);
  m_undoDelete->setEnabled(!m_deleted.empty());
  m_notes->setEnabled(items.size() == 1 && !items.front()->data(Name, Qt::UserRole).toString().isEmpty());
  m_compare->setEnabled(selectedRuns().size() >= 2);
}

bool RunsPanel::deleteSelected(QString* error) {
  const QStringList dirs = selectedRuns();
  const auto fail = [&](const QString& why) {
    if (error) *error = why;
    Q_EMIT message(why, true);
    return false;
  };
  if (dirs.isEmpty()) return fail(tr("Select the runs to delete first."));
  for (const QString& dir : dirs)
    if (dir == m_live || dir == m_parked)
      return fail(tr("%1 is training (or paused for its fork); stop it before deleting it.").arg(dir));
  // The desktop's trash is $XDG_DATA_HOME/Trash (freedesktop.org). Qt 6.4
  // does not make $XDG_DATA_HOME when it is missing: it then "trashes" into
  // files/ and info/ of the working folder.
  QDir().mkpath(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation));
  std::vector<Deleted> done;
  for (const QString& dir : dirs) {
    QString inTrash;
    bool trashed = QFile::moveToTrash(dir, &inTrash);
    if (trashed && QFileInfo(inTrash).isRelative()) {  // no trash after all: put it back where it was
      QDir().rename(inTrash, dir);
      QFile::remove(QFileInfo(inTrash).dir().filePath("../info/" + QFileInfo(inTrash).fileName() + ".trashinfo"));
      trashed = false;
    }
    if (!trashed) {
      const bool some = !done.empty();
      if (some) m_deleted.push_back(std::move(done));
      refresh();
      return fail(
          tr("%1 could not be moved to the trash (no trash on its disk, or no permission); it is "
             "kept%2.")
              .arg(dir, some ? tr(", and the runs moved before it can be brought back with Undo delete") : QString()));
    }
    done.push_back({dir, inTrash});
  }
  m_deleted.push_back(std::move(done));
  refresh();
  Q_EMIT runsDeleted(dirs);
  Q_EMIT message(
      tr("Moved %n run(s) to the trash; Undo delete brings them back.", nullptr, static_cast<int>(dirs.size())), false);
  return true;
}

bool RunsPanel::undoDelete(QString* error) {
  if (m_deleted.empty()) {
    if (error) *error = tr("Nothing deleted to bring back.");
    return false;
  }
  std::vector<Deleted> last = std::move(m_deleted.back());
  m_deleted.pop_back();
  QStringList failed;
  for (const Deleted& d : last) {
    if (QFileInfo::exists(d.original) || !QDir().rename(d.inTrash, d.original)) {
      failed << d.original;
      continue;
    }
    // The trash's note of where it came from (freedesktop.org's layout:
    // <trash>/files/NAME and <trash>/info/NAME.trashinfo).
    const QFileInfo in(d.inTrash);
    QFile::remove(in.dir().filePath("../info/" + in.fileName() + ".trashinfo"));
  }
  refresh();
  if (!failed.isEmpty()) {
    const QString why = tr("Could not bring back %1 (a folder is there now, or the trash moved); the runs are in "
                           "the trash.")
                            .arg(failed.join(", "));
    if (error) *error = why;
    Q_EMIT message(why, true);
    return false;
  }
  QStringList back;
  for (const Deleted& d : last) back << d.original;
  selectRuns(back);
  Q_EMIT message(tr("Brought %n run(s) back from the trash.", nullptr, static_cast<int>(last.size())), false);
  return true;
}

bool RunsPanel::setRunNotes(const QString& dir, const QString& title, const QStringList& tags, const QString& notes,
                            QString* error) {
  QString why;
  if (!writeRunNotes(dir, title, tags, notes, &why)) {
    why = tr("The notes of %1 were not saved: %2").arg(dir, why);
    if (error) *error = why;
    Q_EMIT message(why, true);
    return false;
  }
  refresh();
  return true;
}

void RunsPanel::editNotes(const QString& dir) {
  const RunInfo run = readRunInfo(dir);
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Notes: %1").arg(run.folderName));
  auto* form = new QFormLayout(&dialog);
  auto* title = new QLineEdit(run.title);
  title->setPlaceholderText(run.name);
  auto* tags = new QLineEdit(run.tags.join(", "));
  tags->setPlaceholderText(tr("comma-separated, e.g. baseline, fp16"));
  auto* notes = new QPlainTextEdit(run.notes);
  form->addRow(tr("Title"), title);
  form->addRow(tr("Tags"), tags);
  form->addRow(tr("Notes"), notes);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  setRunNotes(dir, title->text(), tags->text().split(',', Qt::SkipEmptyParts), notes->toPlainText());
}

QDialog* RunsPanel::compareSelected() {
  std::vector<RunInfo> runs;
  for (const QString& dir : selectedRuns()) runs.push_back(readRunInfo(dir));
  if (runs.size() < 2) return nullptr;
  const QStringList keys = differingSettings(runs);
  auto* dialog = new QDialog(this);
  dialog->setObjectName("settingsDiff");
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(tr("Settings that differ"));
  auto* layout = new QVBoxLayout(dialog);
  auto* table = new QTableWidget(static_cast<int>(keys.size()), static_cast<int>(runs.size()));
  table->setObjectName("settingsDiffTable");
  QStringList names;
  for (const RunInfo& r : runs) names << (!r.title.isEmpty() ? r.title : r.folderName);
  table->setHorizontalHeaderLabels(names);
  table->setVerticalHeaderLabels(keys);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  std::vector<std::optional<TrainConfig>> configs;  // to say which values these settings override
  for (const RunInfo& r : runs) {
    try {
      configs.emplace_back(loadConfigFile((r.dir + "/" + run_files::kSettings).toStdString()));
    } catch (const std::exception&) {
      configs.emplace_back();
    }
  }
  for (int row = 0; row < keys.size(); ++row)
    for (int c = 0; c < static_cast<int>(runs.size()); ++c) {
      const QString value = runs[static_cast<size_t>(c)].settings.value(keys[row]);
      auto* cell = new QTableWidgetItem(value.isEmpty() ? tr("(not set)") : value);
      const auto& config = configs[static_cast<size_t>(c)];
      if (const std::string note = config ? settingEffectNote(keys[row].toStdString(), *config) : ""; !note.empty()) {
        cell->setText(tr("%1 (no effect)").arg(cell->text()));
        cell->setToolTip(QString::fromStdString(keys[row].toStdString() + " " + note));
      }
      table->setItem(row, c, cell);
    }
  table->resizeColumnsToContents();
  layout->addWidget(new QLabel(keys.isEmpty() ? tr("These runs have the same settings.")
                                              : tr("%n setting(s) differ.", nullptr, static_cast<int>(keys.size()))));
  layout->addWidget(table);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(close, &QDialogButtonBox::rejected, dialog, &QDialog::close);
  layout->addWidget(close);
  dialog->resize(760, 420);
  dialog->show();
  return dialog;
}

}  // namespace studio::ui
