#pragma once
// Runs slow work (scanning a data folder, building a model summary) on Qt's
// thread pool and hands the result to the UI thread. A newer request for the
// same job supersedes the older one: a late result is dropped, never shown
// over a newer one. The work gets copies of its inputs, never pointers into
// the window; it must not throw (put errors in the result).
// Thread: start and the callback on the UI thread; the work on a pool thread.

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <functional>
#include <memory>

namespace studio::ui {

template <class Result>
class BackgroundJob {
 public:
  explicit BackgroundJob(QObject* owner) : m_owner(owner), m_serial(std::make_shared<int>(0)) {}

  void start(std::function<Result()> work, std::function<void(const Result&)> done) {
    const int serial = ++*m_serial;
    auto* watcher = new QFutureWatcher<Result>(m_owner);
    std::weak_ptr<int> current = m_serial;
    QObject::connect(watcher, &QFutureWatcherBase::finished, m_owner, [watcher, current, serial, done] {
      watcher->deleteLater();
      auto now = current.lock();
      if (now && *now == serial) done(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(std::move(work)));
  }
  // Drops whatever is running (its result will not be delivered).
  void cancel() { ++*m_serial; }

 private:
  QObject* m_owner;
  std::shared_ptr<int> m_serial;
};

}  // namespace studio::ui
