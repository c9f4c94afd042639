#pragma once
// Help > Guide and Help > User guide: a short guide to the window (what each
// chart shows, the mouse on the charts, the run controls and their
// shortcuts), and the user's documents (docs/user-guide.md, cli.md,
// run-folder.md) rendered in the same dialog at a chosen section. They are
// found beside the program: installed (<prefix>/share/doc/training-studio/)
// or in the source tree the build sits in (docs/).
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
  // The document holding the section with this heading (## or ###),
  // scrolled to it; empty: the user guide from its top. False with a note in
  // the dialog when the documents are not there or no such section is.
  bool showSection(const QString& section = QString());
  QTextBrowser* browser() const { return m_browser; }

  // The user's documents next to this program, in the order the menu lists
  // them (none when they are not there), and their section headings, in order.
  static QStringList documentPaths();
  static QStringList sections();
  // One document's headings (## and ###) outside its code blocks, in order.
  static QStringList headingsOf(const QString& path);

 private:
  QTextBrowser* m_browser;
};

}  // namespace studio::ui
