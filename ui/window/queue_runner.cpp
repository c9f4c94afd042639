#include "ui/window/queue_runner.h"

#include <QDir>
#include <QTimer>

#include <algorithm>

#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_lifecycle.h"

namespace studio::ui {

QueueRunner::QueueRunner(RunController* controller, RunLifecycle* lifecycle, SettingsPanel* settings, RunsPanel* runs,
                         QObject* parent)
    : QObject(parent), m_controller(controller), m_lifecycle(lifecycle), m_settings(settings), m_runs(runs) {}

QueueRunner::~QueueRunner() = default;

bool QueueRunner::add() {
  if (!m_settings->isValid()) {
    Q_EMIT message(tr("Fix the settings first: %1").arg(m_settings->errorTexts().join("; ")), true);
    return false;
  }
  try {
    QDir().mkpath(m_runs->runsDir());
    QueueItem item;
    item.config = m_settings->config();
    const auto items = studio::addToQueue(m_runs->queueFile().toStdString(), {item});
    const auto queued =
        std::count_if(items.begin(), items.end(), [](const QueueItem& i) { return i.status == QueueStatus::queued; });
    Q_EMIT message(tr("Added to the queue (%1 queued): %2").arg(queued).arg(m_runs->queueFile()), false);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
    return false;
  }
  m_runs->refresh();
  return true;
}

bool QueueRunner::run() {
  if (m_pass) return true;
  if (m_controller->active()) {
    Q_EMIT message(tr("A run is going; the queue starts when it is stopped or done."), true);
    return false;
  }
  try {
    m_pass = std::make_unique<QueuePass>(m_runs->queueFile().toStdString());
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
    return false;
  }
  startNext();
  return m_pass != nullptr;
}

bool QueueRunner::runOne(int64_t id) {
  if (m_pass || m_controller->active()) {
    Q_EMIT message(tr("A run is going; run the item when it is stopped or done."), true);
    return false;
  }
  try {
    editQueue(m_runs->queueFile().toStdString(), [&](std::vector<QueueItem>& items) {
      const auto it = std::find_if(items.begin(), items.end(), [&](const QueueItem& q) { return q.id == id; });
      if (it == items.end() || it->status != QueueStatus::queued) throw InputError("that item is no longer queued");
      std::rotate(items.begin(), it, it + 1);  // first: the pass takes it next
    });
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
    return false;
  }
  m_onlyOne = true;
  if (run()) return true;
  m_onlyOne = false;
  return false;
}

void QueueRunner::end(const QString& text, bool error) {
  m_onlyOne = false;
  m_pass.reset();
  m_item.reset();
  m_runs->refresh();
  Q_EMIT message(text, error);
}

void QueueRunner::startNext() {
  if (!m_pass) return;
  std::optional<QueueItem> next;
  try {
    next = m_pass->next();
  } catch (const std::exception& e) {
    end(QString::fromStdString(e.what()), true);
    return;
  }
  if (!next) {
    end(tr("The queue is done"));
    return;
  }
  bool started = false;
  std::string why;
  try {
    started = queueItemResumes(*next) ? m_lifecycle->resume(QString::fromStdString(next->runDir))
                                      : m_lifecycle->start(next->config);
    if (!started) why = m_lifecycle->lastFailure().toStdString();
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!started) {
    m_pass->notStarted(*next, why);
    QTimer::singleShot(0, this, &QueueRunner::startNext);
    return;
  }
  m_item = std::make_unique<QueueItem>(*next);
  m_pass->started(*m_item, m_controller->runDir().toStdString());
  m_runs->refresh();
}

void QueueRunner::runEnded(const RunSummary& s) {
  if (!m_pass || !m_item) return;
  try {
    m_pass->ended(*m_item, s.status, s.error);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
  }
  m_item.reset();
  if (m_onlyOne)
    end(tr("The queue item ran; the others wait for Run queue"));
  else if (!QueuePass::goesOnAfter(s.status))
    end(tr("Queue stopped; Run queue resumes this run first"));
  else
    QTimer::singleShot(0, this, &QueueRunner::startNext);
}

}  // namespace studio::ui
