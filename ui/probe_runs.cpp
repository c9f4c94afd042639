#include "ui/probe_runs.h"

#include <QDir>
#include <QMessageBox>
#include <QWidget>

#include "ui/lr_find_dialog.h"
#include "ui/run_controller.h"
#include "ui/run_lifecycle.h"
#include "ui/settings_panel.h"

namespace studio::ui {
namespace {

QString absolute(const QString& dir) { return QDir(dir).absolutePath(); }

}  // namespace

ProbeRuns::ProbeRuns(RunController* controller, RunLifecycle* lifecycle, SettingsPanel* settings,
                     QWidget* dialogParent)
    : QObject(dialogParent), m_controller(controller), m_lifecycle(lifecycle), m_settings(settings),
      m_dialogParent(dialogParent) {
  connect(m_controller, &RunController::recordsArrived, this,
          [this](const QString& runDir, const std::vector<MetricRecord>& records) {
            if (m_lrFind && absolute(runDir) == m_lrFindRun) m_lrFind->addRecords(records);
          });
}

LrFindDialog* ProbeRuns::openLrFind() {
  if (!m_lrFind) {
    m_lrFind = new LrFindDialog(m_dialogParent);
    connect(m_lrFind, &LrFindDialog::startRequested, this, &ProbeRuns::startLrFind);
    connect(m_lrFind, &LrFindDialog::useRequested, this, [this](const QString& path, const QString& value) {
      if (m_controller->active()) {
        Q_EMIT message(tr("The settings are locked while a run trains; use the rate when it is done."), true);
        return;
      }
      m_settings->editField(path, value);
      Q_EMIT message(tr("%1 set to %2 (Edit > Undo takes it back)").arg(path, value), false);
    });
  }
  const TrainConfig c = m_settings->config();
  m_lrFind->setTarget(c.schedule.kind == "onecycle" ? "schedule.onecycle.max_lr" : "optimizer.lr");
  m_lrFind->show();
  m_lrFind->raise();
  return m_lrFind;
}

bool ProbeRuns::startLrFind(const LrFindOptions& options) {
  if (!m_lifecycle->startProbe([&] { return m_controller->findLearningRate(m_settings->config(), options); }))
    return false;
  m_lrFindRun = absolute(m_controller->runDir());
  openLrFind()->begin(m_lrFindRun);
  return true;
}

bool ProbeRuns::startBatchFind() {
  if (!m_lifecycle->startProbe([&] { return m_controller->findBatchSize(m_settings->config(), {}); })) return false;
  m_batchFindRun = absolute(m_controller->runDir());
  Q_EMIT message(tr("Finding the largest micro-batch that fits (%1)…").arg(m_batchFindRun), false);
  return true;
}

void ProbeRuns::runEnded(const RunSummary& s) {
  const QString dir = absolute(QString::fromStdString(s.runDir));
  if (m_lrFind && dir == m_lrFindRun) {
    m_lrFind->finish(s);
    m_lrFindRun.clear();
  }
  if (!m_batchFindRun.isEmpty() && dir == m_batchFindRun) {
    m_batchFindRun.clear();
    if (s.status == "completed" && s.batchFindMicro > 0) offerBatch(s);
  }
}

void ProbeRuns::offerBatch(const RunSummary& s) {
  const TrainConfig c = m_settings->config();
  auto* box = new QMessageBox(QMessageBox::Question, tr("Largest batch"),
                              tr("The largest micro-batch whose training step fits on %1 is %2.\n\nFor the "
                                 "effective batch of %3: micro-batch %4 with %5 accumulation step(s). Use them?")
                                  .arg(QString::fromStdString(s.device))
                                  .arg(s.batchFindLargest)
                                  .arg(int64_t(c.train.batch_size) * c.train.accumulation_steps)
                                  .arg(s.batchFindMicro)
                                  .arg(s.batchFindAccumulation),
                              QMessageBox::Yes | QMessageBox::No, m_dialogParent);
  box->setObjectName("batchFindResult");
  box->setAttribute(Qt::WA_DeleteOnClose);
  const QString micro = QString::number(s.batchFindMicro), accumulation = QString::number(s.batchFindAccumulation);
  connect(box, &QMessageBox::finished, this, [this, micro, accumulation](int answer) {
    if (answer != QMessageBox::Yes) return;
    m_settings->editField("train.batch_size", micro);
    m_settings->editField("train.accumulation_steps", accumulation);
    Q_EMIT message(tr("train.batch_size %1, train.accumulation_steps %2 (Edit > Undo takes them back)")
                       .arg(micro, accumulation),
                   false);
  });
  box->open();
}

}  // namespace studio::ui
