#include "ui/label/label_session.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>

#include <algorithm>
#include <set>

#include "studio/errors.h"
#include "studio/label_export.h"
#include "studio/log.h"

namespace studio::ui {
namespace {

QStringList labelImagesUnder(const QString& folder) {
  static const QStringList kinds = {"*.png", "*.jpg", "*.jpeg", "*.bmp", "*.PNG", "*.JPG", "*.JPEG", "*.BMP"};
  QStringList found;
  QDirIterator it(folder, kinds, QDir::Files, QDirIterator::Subdirectories);
  const QDir root(folder);
  while (it.hasNext()) found << root.relativeFilePath(it.next());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

LabelEditor::LabelEditor(const QString& folder)
    : m_folder(QDir(folder).absolutePath()), m_images(labelImagesUnder(folder)) {
  if (m_images.isEmpty())
    throw InputError("the folder " + folder.toStdString() + " has no images (PNG, JPEG or BMP) to label");
}

LabelSession::LabelSession(const QString& folder, const QString& labelsFile) : LabelEditor(folder) {
  const QString file = labelsFile.isEmpty() ? m_folder + "/labels.csv" : labelsFile;
  m_store = std::make_unique<LabelStore>(file.toStdString());
  std::set<QString> known;
  for (const auto& [image, label] : m_store->labels()) known.insert(QString::fromStdString(label.label));
  for (const QString& c : known) m_classes << c;
}

LabelSession::~LabelSession() {
  try {
    if (m_store && m_store->pendingChanges() > 0) m_store->compact();
  } catch (const std::exception& e) {
    // The journal keeps every change: the next opening replays it.
    log::warn(std::string("the labels file was not rewritten (its journal keeps every change): ") + e.what());
  }
}

QString LabelSession::labelsFile() const { return QString::fromStdString(m_store->path()); }
QString LabelSession::describe(const QString& image) const {
  if (const auto label = labelOf(image)) {
    const ClassProposal* p = isFlagged(image) ? proposalOf(image) : nullptr;
    return QString::fromStdString(label->label) + (p ? QString(" (audit: %1?)").arg(p->label) : QString());
  }
  if (const ClassProposal* p = proposalOf(image))
    return QString("%1? %2%").arg(p->label).arg(p->probability * 100, 0, 'f', 0);
  return QStringLiteral("(unlabelled)");
}

std::optional<ImageLabel> LabelSession::labelOf(const QString& image) const {
  return m_store->labelOf(image.toStdString());
}

void LabelSession::apply(const QString& image, const std::optional<ImageLabel>& to) {
  if (to)
    m_store->set(image.toStdString(), to->label, to->madeBy);
  else
    m_store->clear(image.toStdString());
  if (to && !m_classes.contains(QString::fromStdString(to->label))) m_classes << QString::fromStdString(to->label);
}

void LabelSession::record(EditHistory<ImageLabel>::Step step) {
  m_history.record(std::move(step), [this](const QString& image, const auto& to) { apply(image, to); });
}

void LabelSession::setLabel(const QString& image, const QString& label) {
  const ClassProposal* proposal = proposalOf(image);
  ImageLabel to{label.toStdString(), "person"};
  if (proposal) to.madeBy = proposal->label == label ? "accepted" : "corrected";
  const std::optional<ImageLabel> before = labelOf(image);
  if (before == to) return;
  record({{image, before, to}});
}

void LabelSession::clearLabel(const QString& image) {
  const std::optional<ImageLabel> before = labelOf(image);
  if (before) record({{image, before, std::nullopt}});
}

bool LabelSession::acceptProposal(const QString& image) {
  const ClassProposal* proposal = proposalOf(image);
  if (!proposal) return false;
  setLabel(image, proposal->label);
  return true;
}

QStringList LabelSession::undo() {
  return m_history.undo([this](const QString& image, const auto& to) { apply(image, to); });
}
QStringList LabelSession::redo() {
  return m_history.redo([this](const QString& image, const auto& to) { apply(image, to); });
}

void LabelSession::addClass(const QString& name) {
  const QString trimmed = name.trimmed();
  if (trimmed.isEmpty()) throw InputError("a class needs a name");
  if (trimmed.contains('\n') || trimmed.contains('\r'))
    throw InputError("a class name cannot hold a line break (\"" + trimmed.toStdString() + "\")");
  if (!m_classes.contains(trimmed)) m_classes << trimmed;
}

int LabelSession::renameClass(const QString& from, const QString& to) {
  const QString target = to.trimmed();
  addClass(target);
  EditHistory<ImageLabel>::Step step;
  for (const auto& [image, label] : m_store->labels())
    if (QString::fromStdString(label.label) == from)
      step.push_back({QString::fromStdString(image), label, ImageLabel{target.toStdString(), label.madeBy}});
  const int changed = static_cast<int>(step.size());
  record(std::move(step));
  if (from != target) m_classes.removeAll(from);
  return changed;
}

int LabelSession::countOf(const QString& label) const {
  const std::string l = label.toStdString();
  return static_cast<int>(std::count_if(m_store->labels().begin(), m_store->labels().end(),
                                        [&](const auto& row) { return row.second.label == l; }));
}

void LabelSession::setProposals(std::map<QString, ClassProposal> proposals) {
  m_proposals = std::move(proposals);
  for (const auto& [image, p] : m_proposals)
    if (!m_classes.contains(p.label)) m_classes << p.label;
}

const ClassProposal* LabelSession::proposalOf(const QString& image) const {
  const auto it = m_proposals.find(image);
  return it == m_proposals.end() ? nullptr : &it->second;
}

void LabelSession::setFlagged(const std::map<QString, QString>& suggested) {
  m_flagged.clear();
  for (const auto& [image, label] : suggested) {
    if (!inFolder(image)) continue;  // not under this folder
    m_flagged.insert(image);
    m_proposals[image] = {label, -1};
    if (!m_classes.contains(label)) m_classes << label;
  }
}

QStringList LabelSession::missingImages() const { return notInFolder(m_store->labels()); }

int64_t LabelSession::exportLabels(const QString&, const QString& out) {
  return exportClassFolders(m_folder.toStdString(), m_store->labels(), out.toStdString());
}

QString LabelSession::compact() {
  const QString merged = QString::fromStdString(m_store->compact());
  for (const auto& [image, label] : m_store->labels())  // another program's classes too
    if (!m_classes.contains(QString::fromStdString(label.label))) m_classes << QString::fromStdString(label.label);
  return merged;
}

}  // namespace studio::ui
