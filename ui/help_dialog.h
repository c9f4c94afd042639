#pragma once
// Help > Guide and Help > README: a short guide to the window (what each
// chart shows, the mouse on the charts, the run controls and their
// shortcuts), and the README rendered in the same dialog at a chosen section.
// The README is found beside the program: installed
// (<prefix>/share/doc/training-studio/README.md) or in the source tree the
// build sits in.
// Thread: the UI thread.

#include <QDialog>
#include <QStringList>

class QTextBrowser;

namespace studio::ui {

class HelpDialog : public QDialog {
  Q_OBJECT

 public:
  explicit HelpDialog(QWidget* parent = nullptr);

  void showGuide();
  // The README scrolled to the section with this heading (## or ###);
  // false with a note in the dialog when there is no README or no such section.
  bool showReadme(const QString& section = QString());
  QTextBrowser* browser() const { return m_browser; }

  // The README next to this program ("" when there is none) and its section
  // headings, in order.
  static QString readmePath();
  static QStringList readmeSections();

 private:
  QTextBrowser* m_browser;
};

}  // namespace studio::ui
