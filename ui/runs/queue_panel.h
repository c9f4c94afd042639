#pragma once
// The Queue dock: the runs folder's queue (queue.json) as a list, each item
// with its name, the settings it was given, its model and its status; the
// queued ones can be moved up and down, removed, edited (their settings as
// key=value lines, checked as the CLI's --set is) and run now (alone, before
// the others). Every edit goes through the queue file's edit lock
// (studio/run_queue.h), so a CLI runner and the window never lose one
// another's changes.
// Thread: the UI thread.

#include <QWidget>

#include <cstdint>
#include <vector>

#include "studio/run_queue.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace studio::ui {

class QueuePanel : public QWidget {
  Q_OBJECT

 public:
  explicit QueuePanel(QWidget* parent = nullptr);

  void setQueueFile(const QString& path);
  QString queueFile() const { return m_file; }
  // Reads the file again.
  void refresh();
  QTreeWidget* list() const { return m_list; }
  // The ids in the list's order.
  std::vector<int64_t> itemIds() const;
  void select(int64_t id);

  // The queued item selected: one place up or down, out of the queue, or
  // its settings changed by "key=value" lines. False, with the reason said
  // (message()), when it cannot (none selected, not queued, a bad setting).
  bool moveSelected(int by);
  bool removeSelected();
  bool editSelected(const std::vector<std::string>& assignments, QString* error = nullptr);

 Q_SIGNALS:
  // Run this queued item now, alone (the window's queue runner does).
  void runNowRequested(int64_t id);
  void runAllRequested();
  void message(const QString& text, bool error);

 private:
  int64_t selectedId() const;
  const QueueItem* selectedItem() const;
  // The edit dialog: the item's settings that differ from its own name's
  // defaults, as lines; a refused edit keeps it open with the reason.
  void askEdit();
  void updateButtons();

  QString m_file;
  std::vector<QueueItem> m_items;
  QTreeWidget* m_list;
  QLabel* m_problem;
  QPushButton *m_up, *m_down, *m_remove, *m_edit, *m_runNow, *m_runAll;
};

}  // namespace studio::ui
