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

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "studio/label_store.h"
#include "ui/label/edit_history.h"

namespace studio::ui {

// What the Label tab asks of a folder's labels, whichever the labels file
// holds: a class per image (LabelSession) or boxes (BoxSession).
class LabelEditor {
 public:
  virtual ~LabelEditor() = default;
  const QString& folder() const { return m_folder; }
  const QStringList& images() const { return m_images; }
  QString absolutePath(const QString& image) const { return m_folder + "/" + image; }
  virtual QString labelsFile() const = 0;
  virtual bool isLabelled(const QString& image) const = 0;
  virtual bool hasProposal(const QString& image) const = 0;
  virtual QString describe(const QString& image) const = 0;       // what a thumbnail says under the name
  virtual bool isFlagged(const QString&) const { return false; }  // by the audit
  virtual QStringList classNames() const = 0;                     // in the number keys' order
  virtual int countOf(int classIndex) const = 0;                  // images (classes) or boxes of the class
  virtual int labelled() const = 0;
  virtual void addClass(const QString& name) = 0;
  // Renames a class (onto an existing one: a merge, one undo step);
  // returns how many images changed.
  virtual int renameClass(const QString& from, const QString& to) = 0;
  // Undo / redo one step; the images it changed.
  virtual QStringList undo() = 0;
  virtual QStringList redo() = 0;
  // Folds the journal into the labels file (before a training reads it);
  // returns what it merged from another program's edits.
  virtual QString compact() = 0;
  // Whether another program changed the labels file since it was read or
  // written (the tab then merges: compact() keeps its rows, ours on top).
  virtual bool changedOnDisk() const = 0;
  // The labels file's images that are not in the folder (a typo, a file
  // moved away): kept in the file, but no training can read them.
  virtual QStringList missingImages() const = 0;
  // The layouts the labels export to ("class folders"; "YOLO", "Pascal VOC"),
  // and an export into out, a new or empty folder; returns the images written.
  virtual QStringList exportFormats() const = 0;
  virtual int64_t exportLabels(const QString& format, const QString& out) = 0;

 protected:
  // The images under folder (relative names, sorted; sub-folders too);
  // throws InputError for a folder without images.
  explicit LabelEditor(const QString& folder);
  // Whether image (a relative name) is one of the folder's (m_images is sorted).
  bool inFolder(const QString& image) const { return std::binary_search(m_images.begin(), m_images.end(), image); }
  // missingImages() of a store's map keyed by image name.
  template <class Labels>
  QStringList notInFolder(const Labels& labels) const {
    QStringList missing;
    for (const auto& entry : labels)
      if (const QString image = QString::fromStdString(entry.first); !inFolder(image)) missing << image;
    return missing;
  }
  QString m_folder;
  QStringList m_images;  // sorted
};

struct ClassProposal {
  QString label;
  double probability = 0;  // the model's; -1: the audit's suggestion for a label it flagged
};

class LabelSession : public LabelEditor {
 public:
  // The images under folder (relative names, sorted; sub-folders too) and
  // labelsFile (empty: folder/labels.csv). Throws what LabelStore throws
  // (another editor holds the file, a bad row named) and InputError for a
  // folder without images.
  LabelSession(const QString& folder, const QString& labelsFile = {});
  ~LabelSession() override;  // folds the journal into the labels file

  QString labelsFile() const override;
  bool isLabelled(const QString& image) const override { return labelOf(image).has_value(); }
  bool hasProposal(const QString& image) const override { return proposalOf(image) != nullptr; }
  QString describe(const QString& image) const override;
  QStringList classNames() const override { return m_classes; }
  int countOf(int classIndex) const override { return countOf(m_classes.value(classIndex)); }

  std::optional<ImageLabel> labelOf(const QString& image) const;
  // A person's class for image: made_by "person", or "accepted" / "corrected"
  // against the image's proposal. One undo step.
  void setLabel(const QString& image, const QString& label);
  void clearLabel(const QString& image);
  // The proposal's class as the image's label ("accepted"); false without one.
  bool acceptProposal(const QString& image);
  QStringList undo() override;
  QStringList redo() override;
  bool canUndo() const { return m_history.canUndo(); }
  bool canRedo() const { return m_history.canRedo(); }

  // The classes in the order the number keys pick them: those of the labels
  // file (sorted), then those added or proposed, in the order they came.
  const QStringList& classes() const { return m_classes; }
  void addClass(const QString& name) override;
  int renameClass(const QString& from, const QString& to) override;
  int countOf(const QString& label) const;
  int labelled() const override { return static_cast<int>(m_store->labels().size()); }

  // A run's proposals (label --prelabel's): image -> its most probable class.
  void setProposals(std::map<QString, ClassProposal> proposals);
  const ClassProposal* proposalOf(const QString& image) const;
  // The audit's flagged images (relative names) with the class it suggests,
  // proposed as the model's are (Return takes the suggestion).
  void setFlagged(const std::map<QString, QString>& suggested);
  bool isFlagged(const QString& image) const override { return m_flagged.count(image) > 0; }

  QString compact() override;
  bool changedOnDisk() const override { return m_store->changedOnDisk(); }
  QStringList missingImages() const override;
  QStringList exportFormats() const override { return {QStringLiteral("class folders")}; }
  int64_t exportLabels(const QString& format, const QString& out) override;

 private:
  void apply(const QString& image, const std::optional<ImageLabel>& to);
  void record(EditHistory<ImageLabel>::Step step);

  std::unique_ptr<LabelStore> m_store;
  QStringList m_classes;
  std::map<QString, ClassProposal> m_proposals;
  std::set<QString> m_flagged;
  EditHistory<ImageLabel> m_history;
};

}  // namespace studio::ui
