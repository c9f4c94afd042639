#include "ui/label/box_session.h"

#include <algorithm>

#include "studio/errors.h"
#include "studio/label_export.h"
#include "studio/log.h"

namespace studio::ui {

BoxSession::BoxSession(const QString& folder, const QString& boxesFile)
    : LabelEditor(folder), m_file(boxesFile), m_store(std::make_unique<BoxLabelStore>(boxesFile.toStdString())) {}

BoxSession::~BoxSession() {
  try {
    if (m_store->pendingChanges() > 0) m_store->compact();
  } catch (const std::exception& e) {
    log::warn(std::string("the boxes file was not rewritten (its journal keeps every change): ") + e.what());
  }
}

QString BoxSession::describe(const QString& image) const {
  if (const auto b = boxesOf(image))
    return b->boxes.empty() ? QStringLiteral("no boxes") : QString("%1 box(es)").arg(b->boxes.size());
  if (!proposalsOf(image).empty()) return QString("%1 proposed").arg(proposalsOf(image).size());
  return QStringLiteral("(unlabelled)");
}

QStringList BoxSession::classNames() const {
  QStringList names;
  for (const BoxCategory& c : categories()) names << QString::fromStdString(c.name);
  return names;
}

int64_t BoxSession::categoryAt(int classIndex) const {
  return classIndex >= 0 && classIndex < static_cast<int>(categories().size())
             ? categories()[static_cast<size_t>(classIndex)].id
             : -1;
}

int BoxSession::countOf(int classIndex) const {
  const int64_t id = categoryAt(classIndex);
  int n = 0;
  for (const auto& [file, b] : m_store->images())
    n += static_cast<int>(
        std::count_if(b.boxes.begin(), b.boxes.end(), [&](const LabelBox& x) { return x.category == id; }));
  return n;
}

int64_t BoxSession::categoryNamed(const QString& name) {
  const std::string n = name.trimmed().toStdString();
  for (const BoxCategory& c : categories())
    if (c.name == n) return c.id;
  if (name.contains('\n')) throw InputError("a class name cannot hold a line break");
  return m_store->addCategory(n);
}

void BoxSession::addClass(const QString& name) { categoryNamed(name); }

int BoxSession::renameClass(const QString& from, const QString& to) {
  const int index = static_cast<int>(classNames().indexOf(from));
  if (index < 0) return 0;
  const int64_t id = categoryAt(index);
  const QString target = to.trimmed();
  if (target.isEmpty()) throw InputError("a class needs a name");
  if (!classNames().contains(target)) {
    m_store->renameCategory(id, target.toStdString());
    return 0;
  }
  const int64_t into = categoryAt(static_cast<int>(classNames().indexOf(target)));  // a merge: the boxes move
  EditHistory<ImageBoxes>::Step step;
  for (const auto& [file, b] : m_store->images()) {
    ImageBoxes after = b;
    for (LabelBox& x : after.boxes)
      if (x.category == id) x.category = into;
    if (!(after == b)) step.push_back({QString::fromStdString(file), b, after});
  }
  const int changed = static_cast<int>(step.size());
  record(std::move(step));
  return changed;
}

std::optional<ImageBoxes> BoxSession::boxesOf(const QString& image) const {
  const auto it = m_store->images().find(image.toStdString());
  if (it == m_store->images().end()) return std::nullopt;
  return it->second;
}

void BoxSession::apply(const QString& image, const std::optional<ImageBoxes>& to) {
  if (to)
    m_store->setBoxes(image.toStdString(), *to);
  else
    m_store->clear(image.toStdString());
}

void BoxSession::record(EditHistory<ImageBoxes>::Step step) {
  m_history.record(std::move(step), [this](const QString& image, const auto& to) { apply(image, to); });
}

void BoxSession::setBoxes(const QString& image, const ImageBoxes& boxes) {
  const std::optional<ImageBoxes> before = boxesOf(image);
  if (before == boxes) return;
  record({{image, before, boxes}});
}

void BoxSession::clear(const QString& image) {
  if (const std::optional<ImageBoxes> before = boxesOf(image)) record({{image, before, std::nullopt}});
}

QStringList BoxSession::undo() {
  return m_history.undo([this](const QString& image, const auto& to) { apply(image, to); });
}
QStringList BoxSession::redo() {
  return m_history.redo([this](const QString& image, const auto& to) { apply(image, to); });
}

QStringList BoxSession::missingImages() const { return notInFolder(m_store->images()); }

int64_t BoxSession::exportLabels(const QString& format, const QString& out) {
  if (format == "YOLO") return exportYolo(m_folder.toStdString(), m_store->images(), categories(), out.toStdString());
  return exportVoc(m_folder.toStdString(), m_store->images(), categories(), out.toStdString());
}

QString BoxSession::compact() { return QString::fromStdString(m_store->compact()); }

void BoxSession::setProposals(std::map<QString, std::vector<LabelBox>> proposals) {
  m_proposals = std::move(proposals);
}

const std::vector<LabelBox>& BoxSession::proposalsOf(const QString& image) const {
  static const std::vector<LabelBox> none;
  const auto it = m_proposals.find(image);
  return it == m_proposals.end() ? none : it->second;
}

bool BoxSession::acceptProposals(const QString& image, int64_t width, int64_t height) {
  const std::vector<LabelBox> proposed = proposalsOf(image);
  if (proposed.empty()) return false;
  ImageBoxes after = boxesOf(image).value_or(ImageBoxes{width, height, {}});
  for (LabelBox b : proposed) {
    b.madeBy = "accepted";
    after.boxes.push_back(b);
  }
  m_proposals.erase(image);
  setBoxes(image, after);
  return true;
}

}  // namespace studio::ui
