#include "ui/common/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace studio::ui {
namespace {

QPalette darkPalette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225), disabled(127, 127, 127);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Mid, QColor(90, 90, 95));
  p.setColor(QPalette::Link, QColor(86, 180, 233));
  p.setColor(QPalette::Highlight, QColor(0, 114, 178));
  p.setColor(QPalette::HighlightedText, Qt::white);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

}  // namespace

void applyTheme(Theme theme) {
  static const QString systemStyle = QApplication::style()->name();
  if (theme == Theme::System) {
    QApplication::setStyle(QStyleFactory::create(systemStyle));
    QApplication::setPalette(QApplication::style()->standardPalette());
    return;
  }
  // Fusion draws both palettes faithfully on every platform.
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  QApplication::setPalette(theme == Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
}

Theme themeFromName(const QString& name) {
  if (name == "dark") return Theme::Dark;
  if (name == "light") return Theme::Light;
  return Theme::System;
}

QString themeName(Theme theme) {
  switch (theme) {
    case Theme::Dark:
      return "dark";
    case Theme::Light:
      return "light";
    default:
      return "system";
  }
}

}  // namespace studio::ui
