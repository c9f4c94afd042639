#include "ui/runs_panel.h"

#include <QCheckBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

#include "studio/run_queue.h"
#include "ui/run_catalog.h"

namespace studio::ui {
namespace {
enum Column { Name, Date, Status, Best, Steps, Model, Device, Parent, Changed, Columns };
}

RunsPanel::RunsPanel(QWidget* parent)
    : QWidget(parent), m_list(new QTreeWidget), m_resume(new QPushButton(tr("Resume"))),
      m_continue(new QPushButton(tr("Continue…"))), m_fork(new QPushButton(tr("Fork…"))),
      m_queueAdd(new QPushButton(tr("Queue"))), m_queueRun(new QPushButton(tr("Run queue"))),
      m_showFailedEarly(new QCheckBox(tr("Show runs that failed before training"))),
      m_export(new QPushButton(tr("Export…"))) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  m_list->setObjectName("runsList");
  m_list->setColumnCount(Columns);
  m_list->setHeaderLabels({tr("Run"), tr("Started"), tr("Status"), tr("Best acc."), tr("Steps"), tr("Model"),
                           tr("Device"), tr("Parent"), tr("Changed")});
  m_list->setRootIsDecorated(false);
  m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_list->setAlternatingRowColors(true);
  m_list->setToolTip(tr("Select a run to draw its curves; select several (Ctrl/Shift) to compare them."));
  m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  top->addWidget(m_list, 1);
  m_showFailedEarly->setObjectName("showFailedEarly");
  m_showFailedEarly->setToolTip(tr("Runs that failed before their first step (bad data, settings or model) keep "
                                   "their folder with the error, and are hidden unless this is on."));
  top->addWidget(m_showFailedEarly);
  connect(m_showFailedEarly, &QCheckBox::toggled, this, &RunsPanel::refresh);
  auto* bar = new QHBoxLayout;
  auto* refresh = new QPushButton(tr("Refresh"));
  m_resume->setObjectName("resumeRun");
  m_continue->setObjectName("continueRun");
  m_fork->setObjectName("forkRun");
  m_fork->setToolTip(tr("Start a new run from one of the selected run's checkpoints with edited settings "
                        "(learning rate, schedule, precision, batch, epochs...); the model and data stay."));
  m_queueAdd->setObjectName("queueAdd");
  m_queueAdd->setToolTip(tr("Add the settings in the form to this runs folder's queue (queue.json); grids of "
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
  m_live = dir.isEmpty() ? QString() : QDir(dir).absolutePath();
  refresh();
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
  m_list->clear();
  for (const RunInfo& run : listRuns(m_dir)) {
    const bool live = run.dir == m_live;
    if (!live && run.status == "failed" && run.steps == 0 && !m_showFailedEarly->isChecked()) continue;
    auto* item = new QTreeWidgetItem(m_list);
    item->setData(Name, Qt::UserRole, run.dir);
    item->setText(Name, run.name.isEmpty() ? run.folderName : run.name);
    item->setToolTip(Name, run.dir);
    item->setText(Date, run.started.toString("yyyy-MM-dd HH:mm:ss"));
    const bool parked = run.dir == m_parked;
    item->setText(Status, live ? (m_livePaused ? tr("paused") : tr("running"))
                               : parked ? tr("paused (its fork trains)") : run.status);
    if (!run.error.isEmpty()) item->setToolTip(Status, run.error);
    if (std::isfinite(run.bestAccuracy)) item->setText(Best, QString::number(run.bestAccuracy * 100, 'f', 2) + " %");
    if (run.totalSteps > 0 || run.steps > 0)
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
    if (q.status != "queued") continue;
    auto* item = new QTreeWidgetItem(m_list);
    item->setText(Name, QString::fromStdString(q.label.empty() ? q.config.name : q.config.name + " (" + q.label + ")"));
    item->setText(Status, tr("queued"));
    item->setText(Model, QString("%1 w%2 d%3").arg(QString::fromStdString(q.config.model.kind)).arg(q.config.model.width)
                             .arg(q.config.model.depth));
    item->setFlags(Qt::ItemIsEnabled);  // nothing to draw yet
    for (int c = 0; c < Columns; ++c) item->setForeground(c, palette().color(QPalette::Disabled, QPalette::Text));
    ++m_queued;
  }
  if (!queueProblem.isEmpty()) {
    auto* item = new QTreeWidgetItem(m_list);
    item->setText(Name, tr("queue.json"));
    item->setText(Status, tr("unreadable"));
    item->setToolTip(Status, queueProblem);
    item->setFlags(Qt::ItemIsEnabled);
  }
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
}

}  // namespace studio::ui
