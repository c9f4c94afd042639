#include "ui/window/run_controller.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStandardPaths>

#include <functional>
#include <stdexcept>

namespace studio::ui {

RunController::RunController(QObject* parent) : QObject(parent) {
  m_timer.setInterval(33);
  connect(&m_timer, &QTimer::timeout, this, &RunController::poll);
}

RunController::~RunController() {
  stopAndWait();
  m_parked.reset();  // a parked run stops (writing its checkpoint) as it ends
}

bool RunController::parkPaused() {
  if (!active() || m_state != SessionState::Paused) {
    Q_EMIT failed(tr("Only a paused run can be forked while it runs; pause it first."));
    return false;
  }
  if (m_parked) {
    Q_EMIT failed(tr("A run is set aside already (%1); resume it first.").arg(m_parked->runDir));
    return false;
  }
  if (!m_session->saveCheckpointAndWait(std::chrono::seconds(120))) {
    Q_EMIT failed(tr("The paused run could not write its checkpoint; see the log."));
    return false;
  }
  poll();
  m_timer.stop();
  m_parked =
      std::make_unique<Parked>(Parked{std::move(m_session), m_runDir, std::move(m_records), m_lastTrain, m_received});
  m_records.clear();
  m_lastTrain = -1;
  m_received = 0;
  m_runDir.clear();
  m_state = SessionState::Idle;
  return true;
}

bool RunController::checkpointIfPaused(const QString& runDir) {
  if (!active() || m_state != SessionState::Paused || runDir != m_runDir) return false;
  return m_session->saveCheckpointAndWait(std::chrono::seconds(120));
}

bool RunController::unpark() {
  if (!m_parked || active()) return false;
  m_session = std::move(m_parked->session);
  m_runDir = m_parked->runDir;
  m_records = std::move(m_parked->records);
  m_lastTrain = m_parked->lastTrain;
  m_received = m_parked->received;
  m_parked.reset();
  m_finishedReported = false;
  m_state = SessionState::Paused;
  m_timer.start();
  return true;
}

bool RunController::launch(const std::function<void(Session&)>& begin) {
  if (active()) {
    Q_EMIT failed(tr("A run is already going; stop it before starting another."));
    return false;
  }
  auto session = std::make_unique<Session>();
  try {
    begin(*session);
  } catch (const std::exception& e) {
    Q_EMIT failed(QString::fromStdString(e.what()));
    return false;
  }
  m_session = std::move(session);
  m_records.clear();
  m_received = 0;
  m_lastTrain = -1;
  m_finishedReported = false;
  m_runDir = QString::fromStdString(m_session->progress().runDir);
  m_state = SessionState::Starting;
  // A run in several processes names its folder once rank 0 has made it
  // (poll() announces it then).
  if (!m_runDir.isEmpty()) Q_EMIT runStarted(m_runDir);
  Q_EMIT stateChanged(m_state);
  m_timer.start();
  return true;
}

bool RunController::start(const TrainConfig& config, const StartOptions& options) {
  return launch([&](Session& s) { s.start(config, options); });
}

bool RunController::resume(const QString& runDir, const StartOptions& options) {
  return launch([&](Session& s) { s.resume(runDir.toStdString(), options); });
}

bool RunController::continueRun(const QString& runDir, const ContinueOptions& more, const StartOptions& options) {
  return launch([&](Session& s) { s.continueRun(runDir.toStdString(), more, options); });
}

bool RunController::findLearningRate(const TrainConfig& config, const LrFindOptions& find) {
  return launch([&](Session& s) { s.findLearningRate(config, find); });
}

bool RunController::findBatchSize(const TrainConfig& config, const BatchFindOptions& find) {
  return launch([&](Session& s) { s.findBatchSize(config, find); });
}

bool RunController::fork(const QString& parentDir, const ForkOptions& fork, const StartOptions& options) {
  return launch([&](Session& s) { s.fork(parentDir.toStdString(), fork, options); });
}

bool RunController::startProcesses(const TrainConfig& config) {
  QString torchrun = qEnvironmentVariable("STUDIO_TORCHRUN");
  if (torchrun.isEmpty()) torchrun = QStandardPaths::findExecutable("torchrun");
  if (torchrun.isEmpty()) {
    Q_EMIT failed(
        tr("distributed.devices asks for several processes, but PyTorch's launcher (torchrun) is not on "
           "PATH: install torch in the Python environment on PATH, or set STUDIO_TORCHRUN to it"));
    return false;
  }
  QString cli = qEnvironmentVariable("STUDIO_CLI");
  if (cli.isEmpty()) cli = QCoreApplication::applicationDirPath() + "/training-studio-cli";
  if (!QFileInfo(cli).isExecutable()) {
    Q_EMIT failed(tr("the headless runner %1 is missing; it starts each process of the run").arg(cli));
    return false;
  }
  return launch([&](Session& s) { s.startProcesses(config, torchrun.toStdString(), cli.toStdString()); });
}

void RunController::pause() {
  if (active()) m_session->pause();
}
void RunController::resumeTraining() {
  if (active()) m_session->resumeTraining();
}
void RunController::stop() {
  if (active()) m_session->stop();
}
void RunController::saveCheckpointNow() {
  if (active()) m_session->saveCheckpointNow();
}
void RunController::setLearningRate(double lr) {
  if (active()) m_session->setLearningRate(lr);
}

void RunController::stopAndWait() {
  if (!m_session) return;
  if (!m_session->finished()) {
    m_session->stop();
    m_session->wait(std::chrono::hours(1));
  }
  poll();
}

bool RunController::active() const { return m_session && !m_finishedReported; }

Progress RunController::progress() const { return m_session ? m_session->progress() : Progress{}; }

const MetricRecord* RunController::lastTrainRecord() const {
  return m_lastTrain >= 0 ? &m_records[static_cast<size_t>(m_lastTrain)] : nullptr;
}

int64_t RunController::droppedRecords() const { return m_session ? m_session->droppedRecords() : 0; }

void RunController::poll() {
  if (!m_session) return;
  // finished() and the state before draining: whatever the engine posted
  // before it ended or paused (it flushes its records first) is in the queue
  // by then, so a paused run's plots hold its last step.
  const bool ended = m_session->finished();
  const SessionState now = m_session->progress().state;
  if (m_runDir.isEmpty()) {
    m_runDir = QString::fromStdString(m_session->progress().runDir);
    if (!m_runDir.isEmpty()) Q_EMIT runStarted(m_runDir);
  }
  std::vector<MetricRecord> batch;
  MetricRecord r;
  while (m_session->pollMetric(r)) batch.push_back(r);
  if (!batch.empty()) {
    m_received += static_cast<int64_t>(batch.size());
    for (const auto& rec : batch) {
      if (rec.kind == RecordKind::Rollback) {
        // The records after the checkpoint no longer stand.
        std::erase_if(m_records, [&](const MetricRecord& old) { return old.step > rec.step; });
        m_lastTrain = -1;
        for (qsizetype i = 0; i < static_cast<qsizetype>(m_records.size()); ++i)
          if (m_records[static_cast<size_t>(i)].kind == RecordKind::Train) m_lastTrain = i;
      }
      if (rec.kind == RecordKind::Train) m_lastTrain = static_cast<qsizetype>(m_records.size());
      m_records.push_back(rec);
    }
    Q_EMIT recordsArrived(m_runDir, batch);
  }
  if (now != m_state) {
    m_state = now;
    Q_EMIT stateChanged(now);
  }
  if (ended && !m_finishedReported) {
    m_finishedReported = true;
    m_timer.stop();
    Q_EMIT runFinished(m_session->summary());
  }
}

}  // namespace studio::ui
