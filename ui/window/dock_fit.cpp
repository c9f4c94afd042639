#include "ui/window/dock_fit.h"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>

namespace studio::ui {

DockFit::DockFit(QMainWindow* window) : QObject(window), m_window(window) { window->installEventFilter(this); }

bool DockFit::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_window && event->type() == QEvent::Show && !m_done) {
    m_done = true;
    if (m_window->height() < kLowHeight) fit();
  }
  return QObject::eventFilter(watched, event);
}

void DockFit::fit() {
  auto* runs = m_window->findChild<QDockWidget*>("runsDock");
  auto* log = m_window->findChild<QDockWidget*>("logDock");
  if (!runs || !log || runs->isFloating() || m_window->dockWidgetArea(runs) != Qt::BottomDockWidgetArea ||
      m_window->dockWidgetArea(log) != Qt::BottomDockWidgetArea)
    return;
  m_window->tabifyDockWidget(log, runs);  // Runs joins Log, Queue and Search
  runs->raise();
  m_window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  m_compact = true;
}

}  // namespace studio::ui
