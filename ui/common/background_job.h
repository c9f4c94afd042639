#pragma once
// Runs slow work (scanning a data folder, building a model summary) on a
// thread of its own and hands the result to the UI thread. A newer request for
// the same job supersedes the older one: a late result is dropped, never shown
// over a newer one. The work gets copies of its inputs, never pointers into
// the window; it must not throw (put errors in the result).
// Thread: start and the callback on the UI thread; the work on its thread.
// Every hand-over between the threads goes through the C++ library (thread
// start, a std::mutex, join), none through Qt's thread pool or event queue:
// Debian's Qt is not instrumented, so ThreadSanitizer (make sanitize) could
// not see Qt's locks and would flag the hand-over itself. The UI thread picks
// the result up with a timer (every 15 ms while a job is under way).

#include <QObject>
#include <QTimer>

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace studio::ui {

template <class Result>
class BackgroundJob {
 public:
  explicit BackgroundJob(QObject* owner) : m_owner(owner) {}
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;
  // Waits for work still under way (its result is dropped).
  ~BackgroundJob() {
    for (auto& t : m_tasks) t.thread.join();
  }

  void start(std::function<Result()> work, std::function<void(const Result&)> done) {
    const int serial = ++m_serial;
    Task& task = m_tasks.emplace_back();
    task.serial = serial;
    task.done = std::move(done);
    task.box = std::make_shared<Box>();
    task.thread = std::thread([box = task.box, work = std::move(work)] {
      Result r = work();
      std::lock_guard<std::mutex> lock(box->mutex);
      box->result = std::move(r);
    });
    if (!m_timer) {
      m_timer = new QTimer(m_owner);
      m_timer->setInterval(15);
      QObject::connect(m_timer, &QTimer::timeout, m_owner, [this] { collect(); });
    }
    m_timer->start();
  }
  // Drops whatever is running (its result will not be delivered).
  void cancel() { ++m_serial; }

 private:
  struct Box {
    std::mutex mutex;
    std::optional<Result> result;
  };
  struct Task {
    int serial = 0;
    std::function<void(const Result&)> done;
    std::shared_ptr<Box> box;
    std::thread thread;
  };

  // The finished tasks: joined, and the current one's result delivered.
  void collect() {
    for (auto it = m_tasks.begin(); it != m_tasks.end();) {
      std::optional<Result> result;
      {
        std::lock_guard<std::mutex> lock(it->box->mutex);
        result = std::move(it->box->result);
      }
      if (!result) {
        ++it;
        continue;
      }
      it->thread.join();
      const bool current = it->serial == m_serial;
      auto done = std::move(it->done);
      it = m_tasks.erase(it);
      if (current) done(*result);  // may start another job
    }
    if (m_tasks.empty() && m_timer) m_timer->stop();
  }

  QObject* m_owner;
  int m_serial = 0;
  std::list<Task> m_tasks;
  QTimer* m_timer = nullptr;  // owned by m_owner
};

}  // namespace studio::ui
