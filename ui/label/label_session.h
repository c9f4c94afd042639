#pragma once
// What the Label tab edits, without its widgets (issue 62, items 1-3): a
// folder's images, their classes in a labels file kept by the crash-safe
// LabelStore (studio/label_store.h: every change on the disk before it
// returns, one editor per file), the undo and redo history, the classes and
// their counts, and a run's proposals with who made each label (a person;
// "accepted": the proposal taken as it was; "corrected": a class set where
// the model proposed another).
// Thread: UI thread.

#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "studio/label_store.h"

namespace studio::ui {

struct ClassProposal {
  QString label;
  double probability = 0;
};

class LabelSession {
 public:
  // The images under folder (relative names, sorted; sub-folders too) and
  // labelsFile (empty: folder/labels.csv). Throws what LabelStore throws
  // (another editor holds the file, a bad row named) and InputError for a
  // folder without images.
  LabelSession(const QString& folder, const QString& labelsFile = {});
  ~LabelSession();  // folds the journal into the labels file

  const QString& folder() const { return m_folder; }
  QString labelsFile() const;
  const QStringList& images() const { return m_images; }
  QString absolutePath(const QString& image) const;

  std::optional<ImageLabel> labelOf(const QString& image) const;
  // A person's class for image: made_by "person", or "accepted" / "corrected"
  // against the image's proposal. One undo step.
  void setLabel(const QString& image, const QString& label);
  void clearLabel(const QString& image);
  // The proposal's class as the image's label ("accepted"); false without one.
  bool acceptProposal(const QString& image);
  // Undo / redo one step (a rename is one step); the images it changed.
  QStringList undo();
  QStringList redo();
  bool canUndo() const { return !m_undo.empty(); }
  bool canRedo() const { return !m_redo.empty(); }

  // The classes in the order the number keys pick them: those of the labels
  // file (sorted), then those added or proposed, in the order they came.
  const QStringList& classes() const { return m_classes; }
  void addClass(const QString& name);
  // Renames a class on every image that has it (onto an existing class: a
  // merge); one undo step. Returns how many images changed.
  int renameClass(const QString& from, const QString& to);
  int countOf(const QString& label) const;
  int labelled() const { return static_cast<int>(m_store->labels().size()); }

  // A run's proposals (label --prelabel's): image -> its most probable class.
  void setProposals(std::map<QString, ClassProposal> proposals);
  const ClassProposal* proposalOf(const QString& image) const;

  // Folds the journal into the labels file (before a training reads it);
  // returns what it merged from another program's edits.
  QString compact();

 private:
  struct Change {
    QString image;
    std::optional<ImageLabel> before, after;
  };
  void apply(const QString& image, const std::optional<ImageLabel>& to);
  void record(std::vector<Change> step);
  QStringList replay(std::vector<std::vector<Change>>& from, std::vector<std::vector<Change>>& to, bool forward);

  QString m_folder;
  QStringList m_images;
  std::unique_ptr<LabelStore> m_store;
  QStringList m_classes;
  std::map<QString, ClassProposal> m_proposals;
  std::vector<std::vector<Change>> m_undo, m_redo;
};

}  // namespace studio::ui
