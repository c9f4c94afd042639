#pragma once
// Small widgets of the settings form: the message under a field, and the
// guard that keeps the mouse wheel from changing a list it passes over.
// Thread: the UI thread.

#include <QLabel>
#include <QObject>

class QComboBox;
class QResizeEvent;

namespace studio::ui {

// The message under a field: word-wrapped, but not height-for-width to the
// form. Qt 6.4's QFormLayout lays out a height-for-width row among hidden
// rows past the end of its arrays (valgrind: invalid writes in
// QFormLayout::setGeometry, then a crash, once an error showed under a field
// of the Schedule section); so the label gives its height at its present
// width as its size hint, and asks for a new layout when its width changes.
class FieldMessage : public QLabel {
 public:
  FieldMessage() { setWordWrap(true); }
  bool hasHeightForWidth() const override { return false; }
  QSize sizeHint() const override { return {QLabel::sizeHint().width(), heightAt(width())}; }
  QSize minimumSizeHint() const override { return {QLabel::minimumSizeHint().width(), heightAt(width())}; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  int heightAt(int w) const { return QLabel::heightForWidth(w > 0 ? w : 240); }
};

// The mouse wheel over a list that does not have the focus scrolls the form
// around it instead of changing the list's value (a person scrolling the form
// would otherwise change whatever list passes under the pointer).
class WheelGuard : public QObject {
 public:
  using QObject::QObject;
  static void guard(QComboBox* box);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace studio::ui
