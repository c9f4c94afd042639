#pragma once
// The Label tab's undo and redo: each step the images it changed, with
// their labels (a class, or an image's boxes) before and after; nullopt:
// not labelled. A new step drops what could be redone.
// Thread: UI thread.

#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace studio::ui {

template <class Value>
class EditHistory {
 public:
  struct Change {
    QString image;
    std::optional<Value> before, after;
  };
  using Step = std::vector<Change>;
  using Apply = std::function<void(const QString& image, const std::optional<Value>& to)>;

  // Applies the step's changes and keeps it for undo.
  void record(Step step, const Apply& apply) {
    if (step.empty()) return;
    for (const Change& c : step) apply(c.image, c.after);
    m_undo.push_back(std::move(step));
    m_redo.clear();
  }
  QStringList undo(const Apply& apply) { return replay(m_undo, m_redo, false, apply); }
  QStringList redo(const Apply& apply) { return replay(m_redo, m_undo, true, apply); }
  bool canUndo() const { return !m_undo.empty(); }
  bool canRedo() const { return !m_redo.empty(); }

 private:
  static QStringList replay(std::vector<Step>& from, std::vector<Step>& to, bool forward, const Apply& apply) {
    if (from.empty()) return {};
    Step step = std::move(from.back());
    from.pop_back();
    QStringList changed;
    for (const Change& c : step) {
      apply(c.image, forward ? c.after : c.before);
      changed << c.image;
    }
    to.push_back(std::move(step));
    return changed;
  }

  std::vector<Step> m_undo, m_redo;
};

}  // namespace studio::ui
