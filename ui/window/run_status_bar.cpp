#include "ui/window/run_status_bar.h"

#include <QLabel>
#include <QProgressBar>

#include <algorithm>
#include <cmath>

#include "studio/rate_text.h"

namespace studio::ui {
namespace {

QString duration(double seconds) {
  const auto s = static_cast<qint64>(std::llround(seconds));
  return s >= 3600
             ? QString("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QChar('0')).arg(s % 60, 2, 10, QChar('0'))
             : QString("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

}  // namespace

namespace {
// A bar as wide as its words up to its maximum (220 px, 320 for loading),
// its words cut with an ellipsis beyond it, so the status bar's squeeze
// never lays the bar's chunk over them ("epoch 1│2: 14/34"), and the bars
// never widen the window's minimum past a small screen.
void fitText(QProgressBar* bar, const QString& text) {
  const int room = bar->maximumWidth() - 24;
  const QString shown = bar->fontMetrics().elidedText(text, Qt::ElideRight, room);
  bar->setFormat(shown);
  bar->setMinimumWidth(std::min(bar->maximumWidth(), bar->fontMetrics().horizontalAdvance(shown) + 24));
}
}  // namespace

RunStatusBar::RunStatusBar(QWidget* parent)
    : QStatusBar(parent),
      m_state(new QLabel),
      m_step(new QLabel),
      m_eta(new QLabel),
      m_speed(new QLabel),
      m_device(new QLabel),
      m_memory(new QLabel),
      m_records(new QLabel),
      m_loading(new QProgressBar),
      m_epochBar(new QProgressBar) {
  m_step->setObjectName("statusStep");
  m_records->setObjectName("statusRecords");
  m_loading->setObjectName("loadingProgress");
  m_loading->setMaximumWidth(320);
  m_loading->setTextVisible(true);
  m_loading->hide();
  addPermanentWidget(m_loading);
  m_epochBar->setObjectName("epochProgress");
  m_epochBar->setMaximumWidth(220);
  m_epochBar->setTextVisible(true);
  m_epochBar->hide();
  addPermanentWidget(m_epochBar);
  for (QLabel* l : {m_state, m_step, m_eta, m_speed, m_device, m_memory, m_records}) addPermanentWidget(l);
  clearProgress();
}

void RunStatusBar::clearProgress() {
  m_state->setText(tr("idle"));
  for (QLabel* l : {m_step, m_eta, m_speed, m_memory, m_records}) l->clear();
  m_records->setToolTip(QString());
  m_records->setStyleSheet(QString());
  m_loading->hide();
  m_epochBar->hide();
  m_firstStep = -1;
}

QString RunStatusBar::loadingText() const { return m_loading->isVisible() ? m_loading->format() : QString(); }

QString RunStatusBar::epochText() const { return m_epochBar->isVisible() ? m_epochBar->format() : QString(); }

QString RunStatusBar::stepText() const { return m_step->text(); }

QString RunStatusBar::stateText() const { return m_state->text(); }

QString RunStatusBar::recordsText() const { return m_records->text(); }

QString RunStatusBar::etaText() const { return m_eta->text(); }

QString RunStatusBar::speedText() const { return m_speed->text(); }

void RunStatusBar::showProgress(const Progress& p, const MetricRecord* last, int64_t received) {
  const bool evaluating = p.state == SessionState::Running && p.phase.rfind("evaluating", 0) == 0;
  m_state->setText(p.stopping ? tr("stopping…") : evaluating ? tr("evaluating") : QString(stateName(p.state)));
  const bool loading = !p.phase.empty() && (p.state == SessionState::Starting || p.state == SessionState::Running);
  m_loading->setVisible(loading);
  if (loading) {
    const QString phase = QString::fromStdString(p.phase);
    if (p.phaseTotal > 0) {
      m_loading->setRange(0, 1000);
      m_loading->setValue(static_cast<int>(1000 * p.phaseDone / p.phaseTotal));
      fitText(m_loading, QString("%1 %2/%3").arg(phase).arg(p.phaseDone).arg(p.phaseTotal));
    } else {
      m_loading->setRange(0, 0);  // busy, no count
      m_loading->setFormat(phase);
    }
  }
  // The epoch of the last step made: once an epoch's last step is done the
  // engine's position is already the next epoch (a 2-epoch run ends at
  // epoch 2, not 3); its last record says which epoch that step was in.
  const int64_t epoch = last && last->step == p.step && p.step > 0 ? last->epoch : p.epoch;
  if (m_probe == "batch-find")
    m_step->setText(tr("batch-find · %n size(s) tried", nullptr, static_cast<int>(p.step)));
  else if (!m_probe.isEmpty())
    m_step->setText(tr("%1 · step %2 / %3").arg(m_probe).arg(p.step).arg(p.totalSteps));
  else
    m_step->setText(tr("epoch %1 · step %2 / %3").arg(epoch + 1).arg(p.step).arg(p.totalSteps));
  const bool ended = p.state == SessionState::Finished || p.state == SessionState::Stopped ||
                     p.state == SessionState::Failed || p.state == SessionState::Idle;
  // The epoch's steps done, while it trains (paused too: where it stands).
  const bool training = m_probe.isEmpty() && !ended && !loading && p.step > 0 && m_stepsPerEpoch > 0 &&
                        (p.state == SessionState::Running || p.state == SessionState::Paused);
  m_epochBar->setVisible(training);
  if (training) {
    const auto perEpoch = static_cast<int64_t>(m_stepsPerEpoch);
    const int64_t done = std::clamp<int64_t>(p.step - epoch * perEpoch, 0, perEpoch);
    m_epochBar->setRange(0, static_cast<int>(perEpoch));
    m_epochBar->setValue(static_cast<int>(done));
    fitText(m_epochBar, tr("epoch %1: %2/%3 steps").arg(epoch + 1).arg(done).arg(perEpoch));
  }
  if (ended) {
    // Nothing is left to estimate or to measure.
    m_eta->clear();
    m_speed->clear();
    m_firstStep = -1;
  }
  if (p.state == SessionState::Running && p.step > 0) {
    if (m_firstStep < 0) {
      m_firstStep = p.step;
      m_clock.start();
    }
    const double elapsed = m_clock.elapsed() / 1000.0;
    const int64_t done = p.step - m_firstStep;
    if (done > 0 && elapsed > 1) {
      m_eta->setText(tr("ETA %1").arg(duration(static_cast<double>(p.totalSteps - p.step) * elapsed / done)));
    }
  }
  if (p.samplesPerSecond > 0 && !ended)
    m_speed->setText(tr("%1 samples/s").arg(QString::fromStdString(rateText(p.samplesPerSecond))));
  m_device->setText(QString::fromStdString(p.device));
  if (last && std::isfinite(last->memAllocatedMiB)) {
    const bool gpu = p.device.rfind("cuda", 0) == 0;
    m_memory->setText(gpu ? tr("GPU %1 MiB (reserved %2, peak %3)")
                                .arg(last->memAllocatedMiB, 0, 'f', 0)
                                .arg(last->memReservedMiB, 0, 'f', 0)
                                .arg(last->memPeakMiB, 0, 'f', 0)
                          : tr("RSS %1 MiB").arg(last->memAllocatedMiB, 0, 'f', 0));
  }
  if (p.droppedRecords > 0) {
    m_records->setText(tr("%L1 records, %L2 dropped").arg(received).arg(p.droppedRecords));
    m_records->setToolTip(tr("The live view's queue was full %L1 times: those records are missing from the curves "
                             "but not from the run (metrics.csv has every row).")
                              .arg(p.droppedRecords));
    m_records->setStyleSheet("color: #c0392b;");
  } else {
    m_records->setText(tr("%L1 records").arg(received));
    m_records->setToolTip(tr("Metric records drawn from the live queue; none dropped."));
    m_records->setStyleSheet(QString());
  }
}

}  // namespace studio::ui
