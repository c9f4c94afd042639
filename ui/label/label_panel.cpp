#include "ui/label/label_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImageReader>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "studio/errors.h"
#include "studio/label_suggest.h"
#include "ui/label/label_session.h"

namespace studio::ui {
namespace {

constexpr int kLabelThumb = 96;
enum LabelFilter { ShowAll, ShowUnlabelled, ShowLabelled, ShowProposed };

QImage labelThumbnailOf(const QString& path) {
  QImageReader reader(path);
  const QSize size = reader.size();
  if (size.isValid()) reader.setScaledSize(size.scaled(kLabelThumb, kLabelThumb, Qt::KeepAspectRatio));
  return reader.read();
}

}  // namespace

LabelPanel::LabelPanel(QWidget* parent)
    : QWidget(parent),
      m_where(new QLabel(tr("Open a folder of images to label them; their classes go to a labels file beside them."))),
      m_filter(new QComboBox),
      m_propose(new QPushButton(tr("Propose with run…"))),
      m_order(new QPushButton(tr("Order by run…"))),
      m_train(new QPushButton(tr("Train on these labels"))),
      m_classes(new QListWidget),
      m_thumbs(new QListWidget),
      m_scroll(new QScrollArea),
      m_view(new QLabel),
      m_caption(new QLabel),
      m_summary(new QLabel) {
  setObjectName("labelPanel");
  m_train->setObjectName("trainOnLabels");
  auto* openButton = new QPushButton(tr("Open folder…"));
  m_filter->addItems({tr("All images"), tr("Unlabelled"), tr("Labelled"), tr("Proposed, not labelled")});
  m_propose->setToolTip(tr("The run chosen in the Runs dock proposes a class for each image (Return accepts it)."));
  m_order->setToolTip(
      tr("The run chosen in the Runs dock orders the images by its uncertainty, near-copies last: label first what "
         "teaches it most."));
  m_train->setToolTip(tr("Points the settings at this folder and its labels file; press Start to train on them."));
  auto* top = new QHBoxLayout;
  top->addWidget(openButton);
  top->addWidget(m_where, 1);
  top->addWidget(new QLabel(tr("Show:")));
  top->addWidget(m_filter);
  top->addWidget(m_propose);
  top->addWidget(m_order);
  top->addWidget(m_train);

  auto* addButton = new QPushButton(tr("Add class…"));
  auto* renameButton = new QPushButton(tr("Rename or merge…"));
  auto* classesBox = new QWidget;
  auto* classesLayout = new QVBoxLayout(classesBox);
  classesLayout->setContentsMargins(0, 0, 0, 0);
  classesLayout->addWidget(new QLabel(tr("Classes (number keys):")));
  classesLayout->addWidget(m_classes, 1);
  classesLayout->addWidget(addButton);
  classesLayout->addWidget(renameButton);

  m_thumbs->setViewMode(QListView::IconMode);
  m_thumbs->setIconSize(QSize(kLabelThumb, kLabelThumb));
  m_thumbs->setResizeMode(QListView::Adjust);
  m_thumbs->setUniformItemSizes(true);
  m_thumbs->setGridSize(QSize(kLabelThumb + 40, kLabelThumb + 44));
  m_thumbs->setWordWrap(true);
  m_view->setAlignment(Qt::AlignCenter);
  m_scroll->setWidget(m_view);
  m_scroll->setAlignment(Qt::AlignCenter);
  m_scroll->setWidgetResizable(false);
  auto* viewBox = new QWidget;
  auto* viewLayout = new QVBoxLayout(viewBox);
  viewLayout->setContentsMargins(0, 0, 0, 0);
  viewLayout->addWidget(m_scroll, 1);
  viewLayout->addWidget(m_caption);
  auto* split = new QSplitter;
  split->addWidget(classesBox);
  split->addWidget(m_thumbs);
  split->addWidget(viewBox);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 3);

  m_summary->setWordWrap(true);
  // Long paths and captions never widen the window (its minimum fits 1280 x 720).
  for (QLabel* l : {m_where, m_caption, m_summary}) l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(split, 1);
  layout->addWidget(m_summary);
  for (QWidget* w : std::initializer_list<QWidget*>{m_thumbs, m_scroll, m_classes}) w->installEventFilter(this);

  connect(openButton, &QPushButton::clicked, this, [this] { chooseFolder(); });
  connect(m_filter, &QComboBox::currentIndexChanged, this, [this] { applyFilter(); });
  connect(m_thumbs, &QListWidget::currentItemChanged, this, [this] { showCurrent(); });
  connect(addButton, &QPushButton::clicked, this, [this] { addClass(); });
  connect(renameButton, &QPushButton::clicked, this, [this] { renameClass(); });
  connect(m_train, &QPushButton::clicked, this, [this] { train(); });
  connect(m_propose, &QPushButton::clicked, this, [this] {
    if (const QString run = chooseRun(); !run.isEmpty()) proposeWith(run);
  });
  connect(m_order, &QPushButton::clicked, this, [this] {
    if (const QString run = chooseRun(); !run.isEmpty()) orderBy(run);
  });
  refreshAll();
}

LabelPanel::~LabelPanel() = default;

bool LabelPanel::open(const QString& folder, const QString& labelsFile) {
  std::unique_ptr<LabelSession> session;
  try {
    session = std::make_unique<LabelSession>(folder, labelsFile);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("Cannot label %1: %2").arg(folder, QString::fromUtf8(e.what())), true);
    return false;
  }
  m_session = std::move(session);  // the earlier folder's labels file is folded and let go
  m_modelJob.cancel();
  setBusy(false);
  m_where->setText(tr("%1 — labels in %2").arg(m_session->folder(), m_session->labelsFile()));
  fillThumbnails(m_session->images());
  refreshAll();
  if (m_thumbs->count() > 0) m_thumbs->setCurrentRow(0);
  m_thumbs->setFocus();
  return true;
}

void LabelPanel::chooseFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder of images to label"));
  if (!folder.isEmpty()) open(folder);
}

void LabelPanel::fillThumbnails(const QStringList& order) {
  const QString current = currentImage();
  m_thumbs->clear();
  QStringList paths;
  for (const QString& image : order) {
    auto* item = new QListWidgetItem(m_thumbs);
    item->setData(Qt::UserRole, image);
    refreshItem(item);
    paths << m_session->absolutePath(image);
  }
  m_thumbJob.start(
      [paths] {
        std::vector<QImage> images;
        for (const QString& p : paths) images.push_back(labelThumbnailOf(p));
        return images;
      },
      [this](const std::vector<QImage>& images) {
        for (int i = 0; i < m_thumbs->count() && i < static_cast<int>(images.size()); ++i)
          if (!images[static_cast<size_t>(i)].isNull())
            m_thumbs->item(i)->setIcon(QPixmap::fromImage(images[static_cast<size_t>(i)]));
      });
  applyFilter();
  if (QListWidgetItem* item = itemOf(current)) m_thumbs->setCurrentItem(item);
}

void LabelPanel::refreshItem(QListWidgetItem* item) {
  const QString image = item->data(Qt::UserRole).toString();
  const auto label = m_session->labelOf(image);
  const ClassProposal* proposal = m_session->proposalOf(image);
  QString text = QFileInfo(image).fileName() + "\n";
  QFont font = item->font();
  font.setItalic(!label && proposal);
  if (label)
    text += QString::fromStdString(label->label);
  else if (proposal)
    text += tr("%1? %2%").arg(proposal->label).arg(proposal->probability * 100, 0, 'f', 0);
  else
    text += tr("(unlabelled)");
  item->setText(text);
  item->setFont(font);
  item->setToolTip(image + (label ? tr(" — %1, made by %2").arg(QString::fromStdString(label->label),
                                                                  QString::fromStdString(label->madeBy))
                                  : QString()));
}

void LabelPanel::refreshClasses() {
  const int row = m_classes->currentRow();
  m_classes->clear();
  if (!m_session) return;
  const QStringList& classes = m_session->classes();
  for (int k = 0; k < classes.size(); ++k) {
    const QString key = k < 9 ? QString::number(k + 1) + "  " : QString("    ");
    auto* item = new QListWidgetItem(tr("%1%2 — %3").arg(key, classes[k]).arg(m_session->countOf(classes[k])));
    item->setData(Qt::UserRole, classes[k]);
    m_classes->addItem(item);
  }
  if (row >= 0 && row < m_classes->count()) m_classes->setCurrentRow(row);
}

QString LabelPanel::summary() const { return m_summary->text(); }

void LabelPanel::refreshAll() {
  const bool open = m_session != nullptr;
  for (QWidget* w : std::initializer_list<QWidget*>{m_filter, m_propose, m_order, m_train}) w->setEnabled(open && !m_busy);
  refreshClasses();
  if (!open) {
    m_summary->setText(tr("Keys: 1-9 the class (then the next image), arrows move, Return or A accepts the "
                          "proposal, Delete clears, Z undoes, Shift+Z redoes, + and - zoom."));
    return;
  }
  int proposed = 0;
  for (const QString& image : m_session->images())
    if (!m_session->labelOf(image) && m_session->proposalOf(image)) ++proposed;
  m_summary->setText(tr("%1 of %2 images labelled, %3 proposed and not labelled yet. Keys: 1-9 the class (then "
                        "the next image), arrows move, Return or A accepts the proposal, Delete clears, Z undoes, "
                        "Shift+Z redoes, + and - zoom.")
                         .arg(m_session->labelled())
                         .arg(m_session->images().size())
                         .arg(proposed));
}

void LabelPanel::applyFilter() {
  if (!m_session) return;
  const int f = m_filter->currentIndex();
  for (int i = 0; i < m_thumbs->count(); ++i) {
    QListWidgetItem* item = m_thumbs->item(i);
    const QString image = item->data(Qt::UserRole).toString();
    const bool labelled = m_session->labelOf(image).has_value();
    const bool shown = f == ShowAll || (f == ShowUnlabelled && !labelled) || (f == ShowLabelled && labelled) ||
                       (f == ShowProposed && !labelled && m_session->proposalOf(image));
    item->setHidden(!shown);
  }
  QListWidgetItem* current = m_thumbs->currentItem();
  if (!current || current->isHidden()) {
    m_thumbs->setCurrentItem(nullptr);
    for (int i = 0; i < m_thumbs->count(); ++i)
      if (!m_thumbs->item(i)->isHidden()) {
        m_thumbs->setCurrentRow(i);
        break;
      }
  }
}

QString LabelPanel::currentImage() const {
  QListWidgetItem* item = m_thumbs->currentItem();
  return item && !item->isHidden() ? item->data(Qt::UserRole).toString() : QString();
}

QListWidgetItem* LabelPanel::itemOf(const QString& image) const {
  for (int i = 0; i < m_thumbs->count(); ++i)
    if (m_thumbs->item(i)->data(Qt::UserRole).toString() == image) return m_thumbs->item(i);
  return nullptr;
}

void LabelPanel::showCurrent() {
  const QString image = currentImage();
  if (image.isEmpty() || !m_session) {
    m_image = QImage();
    m_view->clear();
    m_caption->clear();
    return;
  }
  m_image = QImage(m_session->absolutePath(image));
  if (m_image.isNull()) {
    m_view->setText(tr("%1 cannot be read as an image").arg(image));
  } else {
    // Fits the view at zoom 1; small images are shown at least 4x for their pixels.
    const QSize room = m_scroll->viewport()->size() - QSize(4, 4);
    QSize size = m_image.size().scaled(room, Qt::KeepAspectRatio);
    size = (QSizeF(size) * m_zoom).toSize();
    m_view->setPixmap(QPixmap::fromImage(m_image.scaled(size, Qt::KeepAspectRatio, Qt::FastTransformation)));
  }
  m_view->adjustSize();
  const auto label = m_session->labelOf(image);
  const ClassProposal* proposal = m_session->proposalOf(image);
  QString caption = image + ": ";
  caption += label ? tr("%1 (%2)").arg(QString::fromStdString(label->label), QString::fromStdString(label->madeBy))
                   : tr("not labelled");
  if (proposal) caption += tr("; the model proposes %1 (%2%)").arg(proposal->label).arg(proposal->probability * 100, 0, 'f', 1);
  m_caption->setText(caption);
}

void LabelPanel::moveBy(int delta) {
  int row = m_thumbs->currentRow();
  for (int i = row + delta; i >= 0 && i < m_thumbs->count(); i += delta)
    if (!m_thumbs->item(i)->isHidden()) {
      m_thumbs->setCurrentRow(i);
      return;
    }
}

void LabelPanel::labelCurrent(int classIndex) {
  const QString image = currentImage();
  if (image.isEmpty() || classIndex >= m_session->classes().size()) return;
  try {
    m_session->setLabel(image, m_session->classes()[classIndex]);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The label of %1 was not written: %2").arg(image, QString::fromUtf8(e.what())), true);
    return;
  }
  refreshItem(m_thumbs->currentItem());
  const int row = m_thumbs->currentRow();
  moveBy(1);
  if (m_thumbs->currentRow() == row) showCurrent();
  applyFilter();
  refreshAll();
}

bool LabelPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::KeyPress || !m_session) return QWidget::eventFilter(watched, event);
  auto* key = static_cast<QKeyEvent*>(event);
  const int k = key->key();
  const QString image = currentImage();
  auto changed = [&](const QStringList& images) {
    for (const QString& i : images)
      if (QListWidgetItem* item = itemOf(i)) refreshItem(item);
    if (!images.isEmpty() && itemOf(images.front())) m_thumbs->setCurrentItem(itemOf(images.front()));
    showCurrent();
    refreshAll();
  };
  try {
    if (k >= Qt::Key_1 && k <= Qt::Key_9) {
      labelCurrent(k - Qt::Key_1);
    } else if (k == Qt::Key_Left || k == Qt::Key_Up) {
      moveBy(-1);
    } else if (k == Qt::Key_Right || k == Qt::Key_Down) {
      moveBy(1);
    } else if ((k == Qt::Key_Delete || k == Qt::Key_Backspace) && !image.isEmpty()) {
      m_session->clearLabel(image);
      changed({image});
      applyFilter();
    } else if (k == Qt::Key_Z) {
      changed(key->modifiers() & Qt::ShiftModifier ? m_session->redo() : m_session->undo());
      applyFilter();
    } else if ((k == Qt::Key_Return || k == Qt::Key_Enter || k == Qt::Key_A) && !image.isEmpty()) {
      if (const ClassProposal* p = m_session->proposalOf(image)) labelCurrent(static_cast<int>(m_session->classes().indexOf(p->label)));
    } else if (k == Qt::Key_Plus || k == Qt::Key_Equal || k == Qt::Key_Minus) {
      m_zoom = std::clamp(k == Qt::Key_Minus ? m_zoom / 1.25 : m_zoom * 1.25, 0.25, 16.0);
      showCurrent();
    } else {
      return QWidget::eventFilter(watched, event);
    }
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The labels file was not changed: %1").arg(QString::fromUtf8(e.what())), true);
  }
  return true;
}

void LabelPanel::addClass() {
  if (!m_session) return;
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Add class"), tr("Name of the new class:"), QLineEdit::Normal,
                                             QString(), &ok);
  if (!ok) return;
  try {
    m_session->addClass(name);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromUtf8(e.what()), true);
  }
  refreshAll();
}

void LabelPanel::renameClass() {
  QListWidgetItem* item = m_classes->currentItem();
  if (!m_session || !item) return;
  const QString from = item->data(Qt::UserRole).toString();
  bool ok = false;
  const QString to = QInputDialog::getText(
      this, tr("Rename or merge"), tr("New name for %1 (an existing class's name merges them):").arg(from),
      QLineEdit::Normal, from, &ok);
  if (!ok || to.trimmed() == from) return;
  try {
    const int n = m_session->renameClass(from, to);
    Q_EMIT message(tr("%1 renamed to %2 on %n image(s)", nullptr, n).arg(from, to.trimmed()), false);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromUtf8(e.what()), true);
  }
  for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
  showCurrent();
  refreshAll();
}

void LabelPanel::train() {
  if (!m_session) return;
  try {
    const QString merged = m_session->compact();
    if (!merged.isEmpty()) Q_EMIT message(merged, false);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The labels file could not be written: %1").arg(QString::fromUtf8(e.what())), true);
    return;
  }
  Q_EMIT trainOnLabels(m_session->folder(), m_session->labelsFile());
}

QString LabelPanel::chooseRun() {
  QString run = m_runChooser ? m_runChooser() : QString();
  if (run.isEmpty()) run = QFileDialog::getExistingDirectory(this, tr("A trained classifier's run or export folder"));
  return run;
}

void LabelPanel::setBusy(bool busy, const QString& what) {
  m_busy = busy;
  if (busy) m_where->setText(what);
  refreshAll();
}

void LabelPanel::proposeWith(const QString& runDir) {
  if (!m_session || m_busy) return;
  setBusy(true, tr("%1 proposes classes for %2…").arg(runDir, m_session->folder()));
  const std::string run = runDir.toStdString(), folder = m_session->folder().toStdString();
  m_modelJob.start(
      [run, folder, runDir] {
        const QDir root(QString::fromStdString(folder));
        Proposed out;
        out.run = runDir;
        try {
          PrelabelOptions o;
          o.topK = 1;
          const nlohmann::json doc = prelabelImages(run, folder, o);
          if (doc.at("task") != "classification")
            throw InputError("the Label tab labels classes; " + run + " is a detector's run (boxes come next)");
          for (const auto& c : doc.at("classes")) out.classes << QString::fromStdString(c.get<std::string>());
          for (const auto& image : doc.at("images"))
            out.rows.push_back({root.relativeFilePath(QString::fromStdString(image.at("file").get<std::string>())),
                                {QString::fromStdString(image.at("class").get<std::string>()),
                                 image.at("probability").get<double>()}});
        } catch (const std::exception& e) {
          out.error = QString::fromUtf8(e.what());
        }
        return out;
      },
      [this](const Proposed& p) {
        setBusy(false);
        m_where->setText(tr("%1 — labels in %2").arg(m_session->folder(), m_session->labelsFile()));
        if (!p.error.isEmpty()) return Q_EMIT message(tr("No proposals: %1").arg(p.error), true);
        for (const QString& c : p.classes) m_session->addClass(c);
        std::map<QString, ClassProposal> proposals;
        for (const auto& [image, cls] : p.rows) proposals[image] = {cls.first, cls.second};
        m_session->setProposals(std::move(proposals));
        for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
        showCurrent();
        refreshAll();
        Q_EMIT message(tr("%1 proposed classes for %2 images").arg(p.run).arg(p.rows.size()), false);
      });
}

void LabelPanel::orderBy(const QString& runDir) {
  if (!m_session || m_busy) return;
  setBusy(true, tr("%1 orders %2 by what teaches it most…").arg(runDir, m_session->folder()));
  const std::string run = runDir.toStdString(), folder = m_session->folder().toStdString();
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
        m_where->setText(tr("%1 — labels in %2").arg(m_session->folder(), m_session->labelsFile()));
        if (!p.error.isEmpty()) return Q_EMIT message(tr("No order: %1").arg(p.error), true);
        QStringList order = p.order;
        for (const QString& image : m_session->images())  // those it could not read keep the folder's order, last
          if (!order.contains(image)) order << image;
        fillThumbnails(order);
        Q_EMIT message(tr("The images in %1's order: the most uncertain first, near-copies last").arg(p.run), false);
      });
}

}  // namespace studio::ui
