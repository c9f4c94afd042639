#pragma once
// The run's controls: Start, Pause, Resume, Stop, Save checkpoint now, and a
// learning-rate field to change the rate during the run. Enabled by the run's
// state and the settings' validity.
// Thread: the UI thread.

#include <QStyle>
#include <QToolBar>

#include <utility>
#include <vector>

#include "studio/session.h"

class QAction;
class QLineEdit;

namespace studio::ui {

class RunToolBar : public QToolBar {
  Q_OBJECT

 public:
  explicit RunToolBar(QWidget* parent = nullptr);

  void setRunState(SessionState state, bool active);
  void setSettingsValid(bool valid, const QString& why = QString());
  // Shows the rate in effect, as the starting point of an edit.
  void setCurrentLearningRate(double lr);

  QAction* startAction() const { return m_start; }
  QAction* pauseAction() const { return m_pause; }
  QAction* resumeAction() const { return m_resume; }
  QAction* stopAction() const { return m_stop; }
  QAction* saveAction() const { return m_save; }
  QAction* setLrAction() const { return m_setLr; }
  QLineEdit* lrEdit() const { return m_lrEdit; }

 Q_SIGNALS:
  void startRequested();
  void pauseRequested();
  void resumeRequested();
  void stopRequested();
  void saveRequested();
  void learningRateRequested(double lr);
  void message(const QString& text);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void update();
  // The style's icons drawn in the palette's button-text colour (normal and
  // disabled): the Fusion glyphs were near-black on the dark theme's grey.
  void tintIcons();
  std::vector<std::pair<QAction*, QStyle::StandardPixmap>> m_icons;

  QAction* m_start;
  QAction* m_pause;
  QAction* m_resume;
  QAction* m_stop;
  QAction* m_save;
  QAction* m_setLr;
  QLineEdit* m_lrEdit;
  SessionState m_state = SessionState::Idle;
  bool m_active = false;
  bool m_valid = true;
  QString m_invalidWhy;
};

}  // namespace studio::ui
