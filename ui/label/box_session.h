#pragma once
// The Label tab's boxes (issue 62, items 1-3): a folder's images with their
// boxes in a COCO instances file kept by BoxLabelStore (each change on the
// disk before it returns, one editor per file), undo and redo of an image's
// boxes, the categories with their box counts, and a run's proposed boxes
// (label --prelabel's), drawn dashed until accepted.
// Thread: UI thread.

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "studio/box_label_store.h"
#include "ui/label/edit_history.h"
#include "ui/label/label_session.h"

namespace studio::ui {

class BoxSession : public LabelEditor {
 public:
  // boxesFile: a COCO instances JSON (created at the first change).
  // Throws what BoxLabelStore throws, and InputError for a folder without images.
  BoxSession(const QString& folder, const QString& boxesFile);
  ~BoxSession() override;  // folds the journal into the file

  QString labelsFile() const override { return m_file; }
  bool isLabelled(const QString& image) const override { return boxesOf(image).has_value(); }
  bool hasProposal(const QString& image) const override { return !proposalsOf(image).empty(); }
  QString describe(const QString& image) const override;
  QStringList classNames() const override;
  int countOf(int classIndex) const override;
  int labelled() const override { return static_cast<int>(m_store->images().size()); }
  void addClass(const QString& name) override;
  int renameClass(const QString& from, const QString& to) override;
  QStringList undo() override;
  QStringList redo() override;
  QString compact() override;
  bool changedOnDisk() const override { return m_store->changedOnDisk(); }
  QStringList missingImages() const override;
  QStringList exportFormats() const override { return {QStringLiteral("YOLO"), QStringLiteral("Pascal VOC")}; }
  int64_t exportLabels(const QString& format, const QString& out) override;

  std::optional<ImageBoxes> boxesOf(const QString& image) const;
  // An image's boxes whole (none: looked at, nothing to find); one undo step.
  void setBoxes(const QString& image, const ImageBoxes& boxes);
  void clear(const QString& image);
  const std::vector<BoxCategory>& categories() const { return m_store->categories(); }
  int64_t categoryAt(int classIndex) const;  // -1 past the end

  // A run's proposals: image -> its boxes (made_by "accepted" once taken).
  void setProposals(std::map<QString, std::vector<LabelBox>> proposals);
  const std::vector<LabelBox>& proposalsOf(const QString& image) const;
  // The image's proposals added to its boxes (width x height: the image's
  // size); false without any.
  bool acceptProposals(const QString& image, int64_t width, int64_t height);
  // The category of this name (added when missing).
  int64_t categoryNamed(const QString& name);

 private:
  void apply(const QString& image, const std::optional<ImageBoxes>& to);
  void record(EditHistory<ImageBoxes>::Step step);

  QString m_file;
  std::unique_ptr<BoxLabelStore> m_store;
  std::map<QString, std::vector<LabelBox>> m_proposals;
  EditHistory<ImageBoxes> m_history;
};

}  // namespace studio::ui
