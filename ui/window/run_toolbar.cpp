#include "ui/window/run_toolbar.h"

#include <QAction>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <QStyle>

#include <cmath>

namespace studio::ui {

RunToolBar::RunToolBar(QWidget* parent) : QToolBar(tr("Run"), parent) {
  setObjectName("runToolBar");
  setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  auto make = [this](const QString& text, QStyle::StandardPixmap icon, const QKeySequence& key, const QString& tip) {
    QAction* a = addAction(text);
    m_icons.emplace_back(a, icon);
    a->setShortcut(key);
    a->setToolTip(QString("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
    return a;
  };
  m_start = make(tr("Start"), QStyle::SP_MediaPlay, QKeySequence(Qt::Key_F5), tr("Start a run with these settings"));
  m_pause =
      make(tr("Pause"), QStyle::SP_MediaPause, QKeySequence(Qt::Key_F6), tr("Pause the run after the current step"));
  m_resume = make(tr("Resume"), QStyle::SP_MediaSeekForward, QKeySequence(Qt::Key_F7), tr("Continue the paused run"));
  m_stop = make(tr("Stop"), QStyle::SP_MediaStop, QKeySequence(Qt::SHIFT | Qt::Key_F5),
                tr("Stop the run, keeping a checkpoint it can resume from"));
  m_save = make(tr("Save checkpoint"), QStyle::SP_DialogSaveButton, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
                tr("Write a checkpoint now"));
  addSeparator();
  addWidget(new QLabel(tr(" Learning rate: ")));
  m_lrEdit = new QLineEdit;
  m_lrEdit->setObjectName("lrEdit");
  m_lrEdit->setMaximumWidth(110);
  m_lrEdit->setToolTip(
      tr("A new learning rate for the running run; the schedule continues, scaled to it. "
         "The change is marked on the curves and recorded in the run's settings."));
  addWidget(m_lrEdit);
  m_setLr = addAction(tr("Set"));
  m_setLr->setToolTip(m_lrEdit->toolTip());
  connect(m_start, &QAction::triggered, this, &RunToolBar::startRequested);
  connect(m_pause, &QAction::triggered, this, &RunToolBar::pauseRequested);
  connect(m_resume, &QAction::triggered, this, &RunToolBar::resumeRequested);
  connect(m_stop, &QAction::triggered, this, &RunToolBar::stopRequested);
  connect(m_save, &QAction::triggered, this, &RunToolBar::saveRequested);
  auto requestLr = [this] {
    bool ok = false;
    const double lr = QLocale::c().toDouble(m_lrEdit->text().trimmed(), &ok);
    if (!ok || !(lr > 0) || !std::isfinite(lr)) {
      Q_EMIT message(tr("The learning rate must be a number > 0 (got \"%1\")").arg(m_lrEdit->text()));
      return;
    }
    Q_EMIT learningRateRequested(lr);
  };
  connect(m_setLr, &QAction::triggered, this, requestLr);
  connect(m_lrEdit, &QLineEdit::returnPressed, this, requestLr);
  tintIcons();
  update();
}

void RunToolBar::changeEvent(QEvent* event) {
  QToolBar::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) tintIcons();
}

void RunToolBar::tintIcons() {
  const auto tinted = [](const QPixmap& glyph, const QColor& colour) {
    QPixmap out(glyph.size());
    out.fill(Qt::transparent);
    QPainter p(&out);
    p.drawPixmap(0, 0, glyph);
    p.setCompositionMode(QPainter::CompositionMode_SourceIn);
    p.fillRect(out.rect(), colour);
    p.end();
    out.setDevicePixelRatio(glyph.devicePixelRatio());
    return out;
  };
  const QColor normal = palette().color(QPalette::Active, QPalette::ButtonText);
  const QColor disabled = palette().color(QPalette::Disabled, QPalette::ButtonText);
  for (const auto& [action, which] : m_icons) {
    const QPixmap glyph = style()->standardIcon(which).pixmap(iconSize(), devicePixelRatioF());
    QIcon icon;
    icon.addPixmap(tinted(glyph, normal), QIcon::Normal);
    icon.addPixmap(tinted(glyph, disabled), QIcon::Disabled);
    action->setIcon(icon);
  }
}

void RunToolBar::setRunState(SessionState state, bool active) {
  m_state = state;
  m_active = active;
  update();
}

void RunToolBar::setSettingsValid(bool valid, const QString& why) {
  m_valid = valid;
  m_invalidWhy = why;
  update();
}

void RunToolBar::setCurrentLearningRate(double lr) {
  if (!m_lrEdit->hasFocus() && std::isfinite(lr)) m_lrEdit->setText(QString::number(lr, 'g', 4));
}

void RunToolBar::update() {
  const bool running = m_active && (m_state == SessionState::Running || m_state == SessionState::Starting);
  const bool paused = m_active && m_state == SessionState::Paused;
  m_start->setEnabled(!m_active && m_valid);
  m_start->setStatusTip(m_valid ? QString() : tr("Fix the settings first: %1").arg(m_invalidWhy));
  m_pause->setEnabled(running);
  m_resume->setEnabled(paused);
  m_stop->setEnabled(m_active);
  m_save->setEnabled(running || paused);
  m_setLr->setEnabled(running || paused);
  m_lrEdit->setEnabled(running || paused);
}

}  // namespace studio::ui
