#pragma once
// The window's runner of the Runs folder's queue (queue.json): adds the
// form's settings to it, and runs its items one after another as live runs,
// through the pass the CLI's `queue run` uses too (studio/run_queue.h).
// Thread: the UI thread.

#include <QObject>
#include <QString>

#include <memory>

#include "studio/run_queue.h"
#include "studio/session.h"

namespace studio::ui {

class RunController;
class RunLifecycle;
class RunsPanel;
class SettingsPanel;

class QueueRunner : public QObject {
  Q_OBJECT

 public:
  QueueRunner(RunController* controller, RunLifecycle* lifecycle, SettingsPanel* settings, RunsPanel* runs,
              QObject* parent);
  ~QueueRunner() override;

  // The form's settings into the queue file.
  bool add();
  // Runs the queue (false, said, when it cannot start).
  bool run();
  // Runs this queued item now, alone: it moves to the front of the queue
  // and the pass ends after it.
  bool runOne(int64_t id);
  bool running() const { return m_pass != nullptr; }
  // A live run ended: its item's end, then the next item (or the pass ends).
  void runEnded(const RunSummary& summary);

 Q_SIGNALS:
  void message(const QString& text, bool error);

 private:
  void startNext();
  void end(const QString& message, bool error = false);

  RunController* m_controller;
  RunLifecycle* m_lifecycle;
  SettingsPanel* m_settings;
  RunsPanel* m_runs;
  std::unique_ptr<QueuePass> m_pass;
  std::unique_ptr<QueueItem> m_item;  // the item now running
  bool m_onlyOne = false;             // runOne's pass
};

}  // namespace studio::ui
