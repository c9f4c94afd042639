// The Label tab's model jobs (label_panel.h): a run's proposals (label
// --prelabel's) and its order of the images (label --suggest's), each on a
// thread of its own.
#include <QDir>

#include "studio/errors.h"
#include "studio/label_suggest.h"
#include "ui/label/box_canvas.h"
#include "ui/label/box_session.h"
#include "ui/label/label_panel.h"
#include "ui/label/label_session.h"

namespace studio::ui {

void LabelPanel::proposeWith(const QString& runDir) {
  if (!m_editor || m_busy) return;
  setBusy(true, tr("%1 proposes labels for %2…").arg(runDir, m_editor->folder()));
  const std::string run = runDir.toStdString(), folder = m_editor->folder().toStdString();
  const bool boxes = m_boxes != nullptr;
  m_modelJob.start(
      [run, folder, runDir, boxes] {
        const QDir root(QString::fromStdString(folder));
        Proposed out;
        out.run = runDir;
        try {
          PrelabelOptions o;
          o.topK = 1;
          const nlohmann::json doc = prelabelImages(run, folder, o);
          if ((doc.at("task") == "detection") != boxes)
            throw InputError(boxes ? run + " is a classifier's run; boxes need a detector's"
                                   : run + " is a detector's run; classes need a classifier's");
          for (const auto& c : doc.at("classes")) out.classes << QString::fromStdString(c.get<std::string>());
          for (const auto& image : doc.at("images")) {
            const QString name = root.relativeFilePath(QString::fromStdString(image.at("file").get<std::string>()));
            if (!boxes) {
              out.rows.push_back({name,
                                  {QString::fromStdString(image.at("class").get<std::string>()),
                                   image.at("probability").get<double>()}});
              continue;
            }
            std::vector<std::pair<QString, LabelBox>> found;
            for (const auto& b : image.at("boxes"))
              found.push_back({QString::fromStdString(b.at("class").get<std::string>()),
                               LabelBox{b.at("x").get<double>(), b.at("y").get<double>(), b.at("width").get<double>(),
                                        b.at("height").get<double>(), 0, "accepted"}});
            out.boxes.push_back({name, std::move(found)});
          }
        } catch (const std::exception& e) {
          out.error = QString::fromUtf8(e.what());
        }
        return out;
      },
      [this](const Proposed& p) {
        setBusy(false);
        if (!p.error.isEmpty()) return Q_EMIT message(tr("No proposals: %1").arg(p.error), true);
        try {
          for (const QString& c : p.classes) m_editor->addClass(c);
          if (m_boxes) {
            std::map<QString, std::vector<LabelBox>> proposals;
            for (const auto& [image, found] : p.boxes)
              for (auto [name, box] : found) {
                box.category = m_boxes->categoryNamed(name);
                proposals[image].push_back(box);
              }
            m_boxes->setProposals(std::move(proposals));
          } else {
            std::map<QString, ClassProposal> proposals;
            for (const auto& [image, cls] : p.rows) proposals[image] = {cls.first, cls.second};
            m_session->setProposals(std::move(proposals));
          }
        } catch (const std::exception& e) {
          return Q_EMIT message(tr("No proposals: %1").arg(QString::fromUtf8(e.what())), true);
        }
        for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
        showCurrent();
        refreshAll();
        Q_EMIT message(tr("%1 proposed labels for %2 images").arg(p.run).arg(m_boxes ? p.boxes.size() : p.rows.size()),
                       false);
      });
}

void LabelPanel::orderBy(const QString& runDir) {
  if (!m_editor || m_busy) return;
  setBusy(true, tr("%1 orders %2 by what teaches it most…").arg(runDir, m_editor->folder()));
  const std::string run = runDir.toStdString(), folder = m_editor->folder().toStdString();
  m_modelJob.start(
      [run, folder, runDir] {
        const QDir root(QString::fromStdString(folder));
        Proposed out;
        out.run = runDir;
        try {
          for (const SuggestedImage& s : suggestLabellingOrder(run, folder, SuggestOptions{}).order)
            out.order << root.relativeFilePath(QString::fromStdString(s.file));
        } catch (const std::exception& e) {
          out.error = QString::fromUtf8(e.what());
        }
        return out;
      },
      [this](const Proposed& p) {
        setBusy(false);
        if (!p.error.isEmpty()) return Q_EMIT message(tr("No order: %1").arg(p.error), true);
        QStringList order = p.order;
        for (const QString& image : m_editor->images())  // those it could not read keep the folder's order, last
          if (!order.contains(image)) order << image;
        fillThumbnails(order);
        Q_EMIT message(tr("The images in %1's order: the most uncertain first, near-copies last").arg(p.run), false);
      });
}

}  // namespace studio::ui
