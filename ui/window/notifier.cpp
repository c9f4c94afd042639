#include "ui/window/notifier.h"

#include <QAction>
#include <QApplication>
#include <QIcon>
#include <QSettings>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QTimer>
#include <QWidget>

namespace studio::ui {

Notifier::Notifier(QWidget* window, bool persist)
    : QObject(window), m_window(window), m_action(new QAction(tr("Desktop notifications"), this)) {
  m_action->setObjectName("notifyAction");
  m_action->setCheckable(true);
  m_action->setToolTip(
      tr("A notification when a run ends or fails, or its loss starts diverging, while "
         "the window is not the one in use"));
  m_action->setChecked(!persist || QSettings().value("view/notify", true).toBool());
  connect(m_action, &QAction::toggled, this, [persist](bool on) {
    if (persist) QSettings().setValue("view/notify", on);
  });
}

void Notifier::notify(const QString& title, const QString& text, bool failure) {
  if (!m_action->isChecked()) return;
  m_last = title;
  if (m_window->isActiveWindow() && !m_window->isMinimized()) return;  // the person is looking at the window
  QApplication::alert(m_window);
  if (!QSystemTrayIcon::isSystemTrayAvailable() || !QSystemTrayIcon::supportsMessages()) return;
  if (!m_tray) {
    QIcon icon = QIcon::fromTheme("training-studio", m_window->windowIcon());
    if (icon.isNull()) icon = m_window->style()->standardIcon(QStyle::SP_MessageBoxInformation);
    m_tray = new QSystemTrayIcon(icon, this);
    m_tray->setToolTip(tr("Training Studio"));
    connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
      m_window->showNormal();
      m_window->raise();
      m_window->activateWindow();
    });
  }
  m_tray->show();
  m_tray->showMessage(title, text, failure ? QSystemTrayIcon::Critical : QSystemTrayIcon::Information, 15000);
  QTimer::singleShot(20000, m_tray, &QSystemTrayIcon::hide);
}

}  // namespace studio::ui
