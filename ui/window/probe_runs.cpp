#include "ui/window/probe_runs.h"

#include <QDialog>
#include <QDir>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QWidget>

#include <algorithm>

#include "studio/settings_schema.h"
#include "ui/common/form_dialog.h"
#include "ui/common/paths.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/lr_find_dialog.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_lifecycle.h"

namespace studio::ui {
namespace {}  // namespace

ProbeRuns::ProbeRuns(RunController* controller, RunLifecycle* lifecycle, SettingsPanel* settings, QWidget* dialogParent)
    : QObject(dialogParent),
      m_controller(controller),
      m_lifecycle(lifecycle),
      m_settings(settings),
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
  m_lrFind->setTarget(QString::fromStdString(learningRateSetting(c)));  // the rate that acts under the schedule
  m_lrFind->show();
  m_lrFind->raise();
  return m_lrFind;
}

bool ProbeRuns::startLrFind(const LrFindOptions& options) {
  if (!m_lifecycle->startProbe([&] { return m_controller->findLearningRate(m_settings->config(), options); }))
    return false;
  m_lrFindRun = absolute(m_controller->runDir());
  m_lifecycle->markProbe("lr-find");
  openLrFind()->begin(m_lrFindRun);
  return true;
}

BatchFindOptions ProbeRuns::batchFindDefaults() const {
  const TrainConfig c = m_settings->config();
  BatchFindOptions o;
  // What the run can use: its effective batch (the engine stops at the
  // training examples too).
  o.maxBatch = std::clamp<int64_t>(int64_t(c.train.batch_size) * c.train.accumulation_steps, 2, int64_t(1) << 24);
  return o;
}

QDialog* ProbeRuns::openBatchFind() {
  auto* dialog = new QDialog(m_dialogParent);
  dialog->setObjectName("batchFindDialog");
  dialog->setWindowTitle(tr("Find largest batch"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  auto* form = new QFormLayout(dialog);
  const TrainConfig c = m_settings->config();
  const int64_t effective = int64_t(c.train.batch_size) * c.train.accumulation_steps;
  auto* text = new QLabel(
      tr("Tries micro-batches of 1, 2, 4, … up to the size below (and never more than the "
         "training examples), each one training step of the model on zeros, then narrows down "
         "to the largest that fits in the memory of the device (%1). Your effective batch is %2: a larger size "
         "only matters for a larger batch.")
          .arg(QString::fromStdString(c.performance.device))
          .arg(effective));
  text->setWordWrap(true);
  form->addRow(text);
  auto* most = new QSpinBox;
  most->setObjectName("batchFindMax");
  most->setRange(2, 1 << 24);
  most->setValue(static_cast<int>(batchFindDefaults().maxBatch));
  form->addRow(tr("Largest size to try"), most);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Start"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  connect(buttons, &QDialogButtonBox::accepted, dialog, [this, dialog, most] {
    BatchFindOptions o;
    o.maxBatch = most->value();
    dialog->accept();
    startBatchFind(o);
  });
  dialog->open();
  return dialog;
}

bool ProbeRuns::startBatchFind(const BatchFindOptions& options) {
  if (!m_lifecycle->startProbe([&] { return m_controller->findBatchSize(m_settings->config(), options); }))
    return false;
  m_batchFindRun = absolute(m_controller->runDir());
  m_lifecycle->markProbe("batch-find");
  Q_EMIT message(
      tr("Finding the largest micro-batch that fits, up to %1 (%2)…").arg(options.maxBatch).arg(m_batchFindRun), false);
  return true;
}

QString ProbeRuns::runEnded(const RunSummary& s) {
  const QString dir = absolute(QString::fromStdString(s.runDir));
  const bool failed = s.status == RunStatus::failed;
  const QString error = s.error.empty() ? QString() : ": " + QString::fromStdString(s.error);
  if (m_lrFind && dir == m_lrFindRun) {
    m_lrFind->finish(s);
    m_lrFindRun.clear();
    return failed ? tr("The learning-rate finder failed%1").arg(error)
                  : tr("The learning-rate finder %1 after %2 rates")
                        .arg(QString::fromStdString(statusName(s.status)))
                        .arg(s.steps);
  }
  if (!m_batchFindRun.isEmpty() && dir == m_batchFindRun) {
    m_batchFindRun.clear();
    if (s.status == RunStatus::completed && s.batchFind.micro > 0) {
      offerBatch(s);
      return tr("Batch-find: the largest micro-batch that fits is %1 (%2 sizes tried)")
          .arg(s.batchFind.largest)
          .arg(s.batchFind.tried.size());
    }
    return failed ? tr("Batch-find failed%1").arg(error)
                  : tr("Batch-find %1").arg(QString::fromStdString(statusName(s.status)));
  }
  return QString();
}

void ProbeRuns::offerBatch(const RunSummary& s) {
  const TrainConfig c = m_settings->config();
  auto* box = new QMessageBox(QMessageBox::Question, tr("Largest batch"),
                              tr("The largest micro-batch whose training step fits on %1 is %2.\n\nFor the "
                                 "effective batch of %3: micro-batch %4 with %5 accumulation step(s). Use them?")
                                  .arg(QString::fromStdString(s.device))
                                  .arg(s.batchFind.largest)
                                  .arg(int64_t(c.train.batch_size) * c.train.accumulation_steps)
                                  .arg(s.batchFind.micro)
                                  .arg(s.batchFind.accumulation),
                              QMessageBox::Yes | QMessageBox::No, m_dialogParent);
  box->setObjectName("batchFindResult");
  box->setAttribute(Qt::WA_DeleteOnClose);
  const QString micro = QString::number(s.batchFind.micro), accumulation = QString::number(s.batchFind.accumulation);
  connect(box, &QMessageBox::finished, this, [this, micro, accumulation](int answer) {
    if (answer != QMessageBox::Yes) return;
    m_settings->editField("train.batch_size", micro);
    m_settings->editField("train.accumulation_steps", accumulation);
    Q_EMIT message(
        tr("train.batch_size %1, train.accumulation_steps %2 (Edit > Undo takes them back)").arg(micro, accumulation),
        false);
  });
  box->open();
}

}  // namespace studio::ui
