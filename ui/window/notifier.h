#pragma once
// Desktop notifications: when a run ends or fails, or its loss starts
// diverging, while the window is not the one in use, the taskbar's alert and
// the tray's message (clicking it brings the window back). View > Desktop
// notifications (action(), object name "notifyAction") turns them off.
// Thread: the UI thread.

#include <QObject>
#include <QString>

class QAction;
class QSystemTrayIcon;
class QWidget;

namespace studio::ui {

class Notifier : public QObject {
  Q_OBJECT

 public:
  // persist: the on/off choice is kept in QSettings (off the record, it starts on).
  Notifier(QWidget* window, bool persist);
  QAction* action() const { return m_action; }
  void notify(const QString& title, const QString& text, bool failure);
  // The last notification's title, also when the window was in use and
  // nothing popped up.
  QString last() const { return m_last; }

 private:
  QWidget* m_window;
  QAction* m_action;
  QSystemTrayIcon* m_tray = nullptr;
  QString m_last;
};

}  // namespace studio::ui
