#pragma once
// The window's handle on a training session. Owns the engine Session; a timer
// on the UI thread (about 30 Hz) drains every metric record that arrived and
// hands them on in one signal, so the UI never waits for the engine and the
// engine never waits for the UI. Commands go to the engine through the
// session's queue. Records of a run that has been replaced are never
// delivered: each run has its own Session.
// Thread: the UI thread.

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <vector>

#include "studio/session.h"

namespace studio::ui {

class RunController : public QObject {
  Q_OBJECT

 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  // stops a running session, keeping its checkpoint

  // Start a new run or continue one from its folder. False, with failed()
  // emitted, when it cannot start (the message names what was wrong).
  bool start(const TrainConfig& config, const StartOptions& options = {});
  bool resume(const QString& runDir, const StartOptions& options = {});
  bool continueRun(const QString& runDir, const ContinueOptions& more, const StartOptions& options = {});
  bool fork(const QString& parentDir, const ForkOptions& fork, const StartOptions& options = {});
  bool findLearningRate(const TrainConfig& config, const LrFindOptions& find);
  bool findBatchSize(const TrainConfig& config, const BatchFindOptions& find);
  // A run in one process per entry of distributed.devices, through torchrun
  // (STUDIO_TORCHRUN, or torchrun on PATH) and the CLI beside this program
  // (STUDIO_CLI to choose another): rank 0's records arrive as a live run's.
  bool startProcesses(const TrainConfig& config);

  void pause();
  void resumeTraining();
  void stop();
  void saveCheckpointNow();
  void setLearningRate(double lr);
  // Stops and waits for the engine to end (closing the window).
  void stopAndWait();

  bool active() const;  // a session exists and has not finished
  SessionState state() const { return m_state; }
  Progress progress() const;
  QString runDir() const { return m_runDir; }
  // Every record delivered for the current run, in order.
  const std::vector<MetricRecord>& records() const { return m_records; }
  const MetricRecord* lastTrainRecord() const;
  int64_t droppedRecords() const;
  // Records drained from the queue for the current run (a rollback's erased
  // records included).
  int64_t receivedRecords() const { return m_received; }
  // Drains the queue now (tests, screenshots); the timer does it otherwise.
  void poll();

  // A fork of the paused run: its checkpoint is written (waiting for it), and
  // its session is set aside, still paused, so that another run (the fork)
  // can go; unpark() brings it back as the current run, paused. False (with
  // failed()) when the run is not paused or the checkpoint was not written.
  bool parkPaused();
  // The Predict tab on the live run's folder: when it is paused, its current
  // weights are written to its last checkpoint (waiting for it); true then.
  bool checkpointIfPaused(const QString& runDir);
  bool unpark();
  QString parkedRunDir() const { return m_parked ? m_parked->runDir : QString(); }

 Q_SIGNALS:
  void runStarted(const QString& runDir);
  void recordsArrived(const QString& runDir, const std::vector<studio::MetricRecord>& records);
  void stateChanged(studio::SessionState state);
  void runFinished(const studio::RunSummary& summary);
  void failed(const QString& message);

 private:
  bool launch(const std::function<void(Session&)>& begin);

  struct Parked {
    std::unique_ptr<Session> session;
    QString runDir;
    std::vector<MetricRecord> records;
    qsizetype lastTrain = -1;
    int64_t received = 0;
  };
  std::unique_ptr<Parked> m_parked;
  std::unique_ptr<Session> m_session;
  QTimer m_timer;
  SessionState m_state = SessionState::Idle;
  QString m_runDir;
  std::vector<MetricRecord> m_records;
  qsizetype m_lastTrain = -1;
  int64_t m_received = 0;
  bool m_finishedReported = false;
};

}  // namespace studio::ui
