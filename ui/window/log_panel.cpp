#include "ui/window/log_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextCursor>
#include <QTimer>
#include <QVBoxLayout>

#include <spdlog/sinks/qt_sinks.h>

#include "studio/log.h"

namespace studio::ui {
namespace {

constexpr size_t kKeptLines = 20000;
const char* kLevels[] = {"trace", "debug", "info", "warning", "error", "critical"};

int levelOf(const QString& line) {
  const int open = line.indexOf('[');
  const int close = line.indexOf(']', open + 1);
  if (open < 0 || close < 0) return 2;
  const QString name = line.mid(open + 1, close - open - 1);
  for (int i = 0; i < 6; ++i)
    if (name == kLevels[i]) return i;
  return 2;
}

}  // namespace

LogPanel::LogPanel(QWidget* parent) : QWidget(parent), m_level(new QComboBox), m_view(new QPlainTextEdit) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Show:")));
  for (const char* l : kLevels) m_level->addItem(QString(l) + tr(" and above"));
  m_level->setObjectName("logLevel");
  m_level->setCurrentIndex(m_minLevel);
  bar->addWidget(m_level);
  bar->addStretch(1);
  auto* clear = new QPushButton(tr("Clear"));
  bar->addWidget(clear);
  top->addLayout(bar);
  m_view->setReadOnly(true);
  m_view->setMaximumBlockCount(static_cast<int>(kKeptLines));
  m_view->setFont(QFont("monospace"));
  m_view->setObjectName("logView");
  top->addWidget(m_view, 1);
  connect(m_level, &QComboBox::currentIndexChanged, this, &LogPanel::setMinimumLevel);
  // Only the person's scrolling decides whether the view follows; a range
  // that grows (lines appended, the view shown or resized) keeps it at the
  // end while it does.
  QScrollBar* scroll = m_view->verticalScrollBar();
  connect(scroll, &QAbstractSlider::actionTriggered, this, [this, scroll] {
    QTimer::singleShot(0, this, [this, scroll] { m_follow = scroll->value() >= scroll->maximum(); });
  });
  connect(scroll, &QAbstractSlider::rangeChanged, this, [this, scroll](int, int max) {
    if (m_follow) scroll->setValue(max);
  });
  connect(clear, &QPushButton::clicked, this, [this] {
    m_lines.clear();
    m_view->clear();
  });

  auto sink = std::make_shared<spdlog::sinks::qt_sink_mt>(this, "appendLine");
  sink->set_pattern("%H:%M:%S.%e [%l] %v");
  m_sinkHandle = log::addSink(sink);
}

LogPanel::~LogPanel() { m_sinkHandle.reset(); }

void LogPanel::appendLine(const QString& line) {
  const int level = levelOf(line);
  m_lines.push_back({level, line});
  if (m_lines.size() > kKeptLines) m_lines.erase(m_lines.begin(), m_lines.begin() + kKeptLines / 10);
  if (level >= m_minLevel) m_view->appendPlainText(line);
  if (m_follow) m_view->verticalScrollBar()->setValue(m_view->verticalScrollBar()->maximum());
}

void LogPanel::setMinimumLevel(int level) {
  m_minLevel = level;
  if (m_level->currentIndex() != level) m_level->setCurrentIndex(level);
  rebuild();
}

void LogPanel::rebuild() {
  m_view->clear();
  QStringList shown;
  for (const auto& l : m_lines)
    if (l.level >= m_minLevel) shown << l.text;
  m_view->setPlainText(shown.join('\n'));
  // At the newest line, so that new lines are followed again (setPlainText
  // leaves the view at the top, where appending does not scroll).
  m_view->moveCursor(QTextCursor::End);
  m_follow = true;
  m_view->verticalScrollBar()->setValue(m_view->verticalScrollBar()->maximum());
}

bool LogPanel::atNewestLine() const {
  return m_view->verticalScrollBar()->value() == m_view->verticalScrollBar()->maximum();
}

QString LogPanel::visibleText() const { return m_view->toPlainText(); }

}  // namespace studio::ui
