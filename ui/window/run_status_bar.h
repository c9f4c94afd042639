#pragma once
// The status bar: run state, epoch and step (with the epoch's progress as a
// bar), ETA, samples/s, device, memory,
// and how many metric records reached the window (and how many the queue had
// no room for, which only the live view misses: metrics.csv has them all).
// Thread: the UI thread.

#include <QElapsedTimer>
#include <QStatusBar>

#include "studio/session.h"

class QLabel;
class QProgressBar;

namespace studio::ui {

class RunStatusBar : public QStatusBar {
  Q_OBJECT

 public:
  explicit RunStatusBar(QWidget* parent = nullptr);
  // Called on each UI tick with the engine's position and its last train record.
  // received: the records the window has drained from the queue so far.
  void showProgress(const Progress& p, const MetricRecord* lastTrain, int64_t received);
  void clearProgress();
  QString stepText() const;
  // The run's state: "running", "evaluating" while an evaluation runs,
  // "stopping…" from Stop until the run has ended, "stopped", ...
  QString stateText() const;
  // The phase bar's text while one shows ("decoding images 120/600",
  // "evaluating on the test set 3/10"), or "".
  QString loadingText() const;
  // While the run trains, a bar of the epoch's steps done ("epoch 2: 120/469
  // steps"), or "" when none shows. setStepsPerEpoch gives the run's (0: none).
  QString epochText() const;
  void setStepsPerEpoch(double steps) { m_stepsPerEpoch = steps; }
  // The live run is a probe ("lr-find", "batch-find"; "" for a training
  // run): its steps are its tries, said as such, with no epochs.
  void setProbe(const QString& kind) { m_probe = kind; }
  double stepsPerEpoch() const { return m_stepsPerEpoch; }
  QString recordsText() const;
  QString etaText() const;
  QString speedText() const;

 private:
  QLabel* m_state;
  QLabel* m_step;
  QLabel* m_eta;
  QLabel* m_speed;
  QLabel* m_device;
  QLabel* m_memory;
  QLabel* m_records;
  QProgressBar* m_loading;   // decoding and other work before the first step
  QProgressBar* m_epochBar;  // the epoch's steps while it trains
  double m_stepsPerEpoch = 0;
  QString m_probe;
  QElapsedTimer m_clock;
  int64_t m_firstStep = -1;
};

}  // namespace studio::ui
