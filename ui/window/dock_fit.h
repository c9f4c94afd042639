#pragma once
// The docks at a low window (a 1280x720 laptop screen): the Settings form
// in the left area lost the bottom docks' height under it and showed about
// 12 rows of settings, 7 with the Search dock open (issue 60, item 12).
// When the window is first shown lower than kLowHeight (the window starts
// fitted to its screen), the Runs dock joins the Log, Queue and Search tabs and the left area takes the bottom-left
// corner, so the form runs the window's height; the bottom docks, one tab
// group, fit beside it from 1000 px of width. At the first show only (a
// window made low later keeps its docks), and never over a layout the
// person arranged (restored from the last session).
// Thread: the UI thread.

#include <QObject>

class QMainWindow;

namespace studio::ui {

class DockFit : public QObject {
  Q_OBJECT
 public:
  static constexpr int kLowHeight = 820;
  // Watches `window`'s size; its docks are found by their object names
  // (runsDock, logDock).
  explicit DockFit(QMainWindow* window);
  // A layout restored from the last session stays as it was.
  void keepLayout() { m_done = true; }
  bool compact() const { return m_compact; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fit();
  QMainWindow* m_window;
  bool m_done = false;
  bool m_compact = false;
};

}  // namespace studio::ui
