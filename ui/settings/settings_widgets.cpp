#include "ui/settings/settings_widgets.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QResizeEvent>

namespace studio::ui {

void FieldMessage::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  if (event->size().width() != event->oldSize().width()) updateGeometry();
}

void WheelGuard::guard(QComboBox* box) {
  static WheelGuard* const instance = new WheelGuard(qApp);
  box->setFocusPolicy(Qt::StrongFocus);  // a wheel does not give it the focus either
  box->installEventFilter(instance);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  auto* box = qobject_cast<QComboBox*>(watched);
  if (event->type() != QEvent::Wheel || !box || box->hasFocus()) return false;
  // To the scroll area around the form (a sent wheel event does not travel
  // up to it by itself).
  for (QWidget* w = box->parentWidget(); w; w = w->parentWidget())
    if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
      QCoreApplication::sendEvent(area->viewport(), event);
      break;
    }
  return true;
}

}  // namespace studio::ui
