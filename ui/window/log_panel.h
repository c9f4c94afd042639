#pragma once
// The engine's log in a dock: spdlog's Qt sink posts each line to this widget
// (queued onto the UI thread when the engine thread logs), filterable by level.
// Thread: the UI thread; appendLine is invoked across threads by the sink.

#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QPlainTextEdit;

namespace studio::ui {

class LogPanel : public QWidget {
  Q_OBJECT

 public:
  explicit LogPanel(QWidget* parent = nullptr);
  ~LogPanel() override;  // detaches from the engine's log first

  // spdlog level names, lowest first: trace debug info warning error critical
  void setMinimumLevel(int level);
  int lineCount() const { return static_cast<int>(m_lines.size()); }
  QString visibleText() const;
  // The view follows new lines as they arrive: until the person scrolls up,
  // and again once they scroll back to the end; also while the dock is
  // hidden or tabbed away (a restored window's), so it shows the newest
  // line when it is shown.
  bool followsNewLines() const { return m_follow; }
  // The view shows its last line.
  bool atNewestLine() const;

 public Q_SLOTS:
  // One formatted line "HH:MM:SS.mmm [level] text"; the sink calls this by name.
  void appendLine(const QString& line);

 private:
  struct Line {
    int level;
    QString text;
  };
  void rebuild();

  std::vector<Line> m_lines;
  bool m_follow = true;
  int m_minLevel = 2;  // info
  QComboBox* m_level;
  QPlainTextEdit* m_view;
  std::shared_ptr<void> m_sinkHandle;
};

}  // namespace studio::ui
