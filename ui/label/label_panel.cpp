#include "ui/label/label_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImageReader>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "studio/errors.h"
#include "studio/label_suggest.h"
#include "ui/label/box_canvas.h"
#include "ui/label/box_session.h"
#include "ui/label/label_session.h"

namespace studio::ui {
namespace {

constexpr int kLabelThumb = 96;
enum LabelFilter { ShowAll, ShowUnlabelled, ShowLabelled, ShowProposed, ShowFlagged };

QImage labelThumbnailOf(const QString& path) {
  QImageReader reader(path);
  const QSize size = reader.size();
  if (size.isValid()) reader.setScaledSize(size.scaled(kLabelThumb, kLabelThumb, Qt::KeepAspectRatio));
  return reader.read();
}

}  // namespace

LabelPanel::LabelPanel(QWidget* parent)
    : QWidget(parent),
      m_kind(new QComboBox),
      m_where(new QLabel(tr("Open a folder of images to label them; their classes go to a labels file beside them."))),
      m_filter(new QComboBox),
      m_propose(new QPushButton(tr("Propose with run…"))),
      m_order(new QPushButton(tr("Order by run…"))),
      m_train(new QPushButton(tr("Train on these labels"))),
      m_export(new QPushButton(tr("Export labels…"))),
      m_classes(new QListWidget),
      m_thumbs(new QListWidget),
      m_scroll(new QScrollArea),
      m_view(new QLabel),
      m_canvas(new BoxCanvas(this)),
      m_caption(new QLabel),
      m_summary(new QLabel) {
  setObjectName("labelPanel");
  m_train->setObjectName("trainOnLabels");
  auto* openButton = new QPushButton(tr("Open folder…"));
  m_filter->addItems(
      {tr("All images"), tr("Unlabelled"), tr("Labelled"), tr("Proposed, not labelled"), tr("Flagged by the audit")});
  m_propose->setToolTip(tr("The run chosen in the Runs dock proposes a class for each image (Return accepts it)."));
  m_order->setToolTip(
      tr("The run chosen in the Runs dock orders the images by its uncertainty, near-copies last: label first what "
         "teaches it most."));
  m_train->setToolTip(tr("Points the settings at this folder and its labels file; press Start to train on them."));
  m_kind->addItems({tr("Classes (labels.csv)"), tr("Boxes (boxes.json)")});
  m_kind->setToolTip(tr("What Open folder… labels: a class per image, or boxes in a COCO file"));
  // Two rows, so that the tab never widens the window past a 1280-px screen.
  auto* top = new QHBoxLayout;
  top->addWidget(m_kind);
  top->addWidget(openButton);
  top->addWidget(m_where, 1);
  auto* actions = new QHBoxLayout;
  actions->addWidget(new QLabel(tr("Show:")));
  actions->addWidget(m_filter);
  actions->addWidget(m_propose);
  actions->addWidget(m_order);
  actions->addWidget(m_train);
  actions->addWidget(m_export);
  actions->addStretch(1);
  m_export->setObjectName("exportLabels");
  m_export->setToolTip(
      tr("Copies the labelled images into a new folder as other tools read them: class folders "
         "for classes, YOLO or Pascal VOC for boxes (your files are never moved)"));

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
  split->setSizes({170, 330, 500});  // the large view takes the most

  m_summary->setWordWrap(true);
  m_caption->setWordWrap(true);
  // Long paths and captions never widen the window (its minimum fits 1280 x 720).
  for (QLabel* l : {m_where, m_caption, m_summary}) l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addLayout(actions);
  layout->addWidget(split, 1);
  layout->addWidget(m_summary);
  for (QWidget* w : std::initializer_list<QWidget*>{m_thumbs, m_scroll, m_classes}) w->installEventFilter(this);
  m_scroll->viewport()->installEventFilter(this);

  m_canvas->hide();
  auto* watch = new QTimer(this);
  watch->setInterval(2000);
  connect(watch, &QTimer::timeout, this, [this] { mergeOutsideEdits(); });
  watch->start();
  connect(m_canvas, &BoxCanvas::edited, this, [this](const ImageBoxes& b) { boxesEdited(b); });
  connect(openButton, &QPushButton::clicked, this, [this] { chooseFolder(); });
  connect(m_filter, &QComboBox::currentIndexChanged, this, [this] { applyFilter(); });
  connect(m_thumbs, &QListWidget::currentItemChanged, this, [this] { showCurrent(); });
  connect(addButton, &QPushButton::clicked, this, [this] { addClass(); });
  connect(renameButton, &QPushButton::clicked, this, [this] { renameClass(); });
  connect(m_train, &QPushButton::clicked, this, [this] { train(); });
  connect(m_export, &QPushButton::clicked, this, [this] { exportLabels(); });
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
  const bool boxes =
      labelsFile.isEmpty() ? m_kind->currentIndex() == 1 : labelsFile.endsWith(".json", Qt::CaseInsensitive);
  const QString file =
      !labelsFile.isEmpty() ? labelsFile : QDir(folder).absolutePath() + (boxes ? "/boxes.json" : "/labels.csv");
  // The file this tab holds already: let go first (its lock would refuse the tab itself).
  if (m_editor && QFileInfo(m_editor->labelsFile()).absoluteFilePath() == QFileInfo(file).absoluteFilePath()) {
    m_session = nullptr;
    m_boxes = nullptr;
    m_editor.reset();
  }
  std::unique_ptr<LabelEditor> editor;
  LabelSession* classes = nullptr;
  BoxSession* boxSession = nullptr;
  try {
    if (boxes) {
      auto b = std::make_unique<BoxSession>(folder, file);
      boxSession = b.get();
      editor = std::move(b);
    } else {
      auto c = std::make_unique<LabelSession>(folder, file);
      classes = c.get();
      editor = std::move(c);
    }
  } catch (const std::exception& e) {
    Q_EMIT message(tr("Cannot label %1: %2").arg(folder, QString::fromUtf8(e.what())), true);
    if (!m_editor) {  // the tab's own file, let go and not opened again: nothing is shown
      m_modelJob.cancel();
      m_thumbs->clear();
      showCurrent();
      refreshAll();
    }
    return false;
  }
  m_session = nullptr;
  m_boxes = nullptr;
  m_editor = std::move(editor);  // the earlier folder's labels file is folded and let go
  m_session = classes;
  m_boxes = boxSession;
  m_kind->setCurrentIndex(boxes ? 1 : 0);
  m_modelJob.cancel();
  setBusy(false);
  m_where->setText(tr("%1 — labels in %2").arg(m_editor->folder(), m_editor->labelsFile()));
  if (const QStringList missing = m_editor->missingImages(); !missing.isEmpty())
    Q_EMIT message(
        tr("%1 labels %2 image(s) that are not in %3 (%4); they stay in the file, but no training can "
           "read them: move them back, or remove their rows")
            .arg(m_editor->labelsFile())
            .arg(missing.size())
            .arg(m_editor->folder(), QStringList(missing.mid(0, 3)).join(", ") + (missing.size() > 3 ? ", …" : "")),
        true);
  showInView(boxes ? static_cast<QWidget*>(m_canvas) : m_view);
  fillThumbnails(m_editor->images());
  refreshAll();
  if (m_thumbs->count() > 0) m_thumbs->setCurrentRow(0);
  m_thumbs->setFocus();
  return true;
}

void LabelPanel::showInView(QWidget* view) {
  if (m_scroll->widget() == view) return;
  if (QWidget* old = m_scroll->takeWidget()) {
    old->setParent(this);
    old->hide();
  }
  m_scroll->setWidget(view);
  view->show();
}

bool LabelPanel::review(const QString& folder, const QString& labelsFile, const QMap<QString, QString>& suggested) {
  const bool same = m_session && QDir(m_session->folder()) == QDir(folder) &&
                    QFileInfo(m_session->labelsFile()) == QFileInfo(labelsFile);
  if (!same && !open(folder, labelsFile)) return false;
  if (!m_session) return false;
  m_session->setFlagged(std::map<QString, QString>(suggested.toStdMap()));
  for (int i = 0; i < m_thumbs->count(); ++i) refreshItem(m_thumbs->item(i));
  m_filter->setCurrentIndex(ShowFlagged);
  applyFilter();
  showCurrent();
  refreshAll();
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
  QPixmap blank(kLabelThumb, kLabelThumb);  // each item its thumbnail's size before the thumbnail comes
  blank.fill(Qt::transparent);
  for (const QString& image : order) {
    auto* item = new QListWidgetItem(m_thumbs);
    item->setIcon(blank);
    item->setData(Qt::UserRole, image);
    refreshItem(item);
    paths << m_editor->absolutePath(image);
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
  const bool labelled = m_editor->isLabelled(image);
  QFont font = item->font();
  font.setItalic(!labelled && m_editor->hasProposal(image));
  item->setText(QFileInfo(image).fileName() + "\n" + m_editor->describe(image));
  item->setFont(font);
  item->setToolTip(image);
  if (m_session)
    if (const auto label = m_session->labelOf(image))
      item->setToolTip(
          image +
          tr(" — %1, made by %2").arg(QString::fromStdString(label->label), QString::fromStdString(label->madeBy)));
}

void LabelPanel::refreshClasses() {
  const int row = m_classes->currentRow();
  m_classes->clear();
  if (!m_editor) return;
  const QStringList classes = m_editor->classNames();
  for (int k = 0; k < classes.size(); ++k) {
    const QString key = k < 9 ? QString::number(k + 1) + "  " : QString("    ");
    auto* item = new QListWidgetItem(tr("%1%2 — %3").arg(key, classes[k]).arg(m_editor->countOf(k)));
    item->setData(Qt::UserRole, classes[k]);
    m_classes->addItem(item);
  }
  if (row >= 0 && row < m_classes->count()) m_classes->setCurrentRow(row);
}

QString LabelPanel::summary() const { return m_summary->text(); }

void LabelPanel::refreshAll() {
  const bool open = m_editor != nullptr;
  for (QWidget* w : std::initializer_list<QWidget*>{m_filter, m_propose, m_order, m_train})
    w->setEnabled(open && !m_busy);
  refreshClasses();
  if (!open) {
    m_summary->setText(
        tr("Keys: 1-9 the class (then the next image), arrows move, Return or A accepts the "
           "proposal, Delete clears, Z undoes, Shift+Z redoes, + and - zoom."));
    return;
  }
  int proposed = 0;
  for (const QString& image : m_editor->images())
    if (!m_editor->isLabelled(image) && m_editor->hasProposal(image)) ++proposed;
  m_summary->setText(tr("%1 of %2 images labelled, %3 proposed and not labelled yet. Keys: 1-9 the class (then "
                        "the next image), arrows move, Return or A accepts the proposal, Delete clears, Z undoes, "
                        "Shift+Z redoes, + and - zoom.")
                         .arg(m_editor->labelled())
                         .arg(m_editor->images().size())
                         .arg(proposed));
}

void LabelPanel::applyFilter() {
  if (!m_editor) return;
  const int f = m_filter->currentIndex();
  for (int i = 0; i < m_thumbs->count(); ++i) {
    QListWidgetItem* item = m_thumbs->item(i);
    const QString image = item->data(Qt::UserRole).toString();
    const bool labelled = m_editor->isLabelled(image);
    const bool shown = f == ShowAll || (f == ShowUnlabelled && !labelled) || (f == ShowLabelled && labelled) ||
                       (f == ShowProposed && !labelled && m_editor->hasProposal(image)) ||
                       (f == ShowFlagged && m_editor->isFlagged(image));
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
  if (image.isEmpty() || !m_editor) {
    m_image = QImage();
    m_view->clear();
    m_canvas->show(QImage(), {}, {});
    m_caption->clear();
    return;
  }
  m_image = QImage(m_editor->absolutePath(image));
  QString caption = image + ": ";
  if (m_boxes) {
    m_canvas->setCategories(m_boxes->categories());
    m_canvas->show(m_image.convertToFormat(QImage::Format_RGB32),
                   m_boxes->boxesOf(image).value_or(ImageBoxes{m_image.width(), m_image.height(), {}}),
                   m_boxes->proposalsOf(image));
    caption += m_editor->describe(image) + tr(" (drag: draw, move or resize; Return: done)");
  } else {
    if (m_image.isNull()) m_view->setText(tr("%1 cannot be read as an image").arg(image));
    const auto label = m_session->labelOf(image);
    caption += label ? tr("%1 (%2)").arg(QString::fromStdString(label->label), QString::fromStdString(label->madeBy))
                     : tr("not labelled");
    if (const ClassProposal* p = m_session->proposalOf(image))
      caption += p->probability < 0
                     ? tr("; the audit suggests %1 (Return takes it)").arg(p->label)
                     : tr("; the model proposes %1 (%2%)").arg(p->label).arg(p->probability * 100, 0, 'f', 1);
  }
  m_caption->setText(caption);
  fitView();
}

// The image as large as the view holds it, times the zoom (again when the view's size changes).
void LabelPanel::fitView() {
  if (m_image.isNull()) return;
  const QSize room = m_scroll->viewport()->size() - QSize(4, 4);
  const double fit = std::max(0.05, std::min(room.width() / static_cast<double>(m_image.width()),
                                             room.height() / static_cast<double>(m_image.height())));
  if (m_boxes) {
    m_canvas->setScale(fit * m_zoom);
    return;
  }
  m_view->setPixmap(QPixmap::fromImage(
      m_image.scaled((QSizeF(m_image.size()) * fit * m_zoom).toSize(), Qt::KeepAspectRatio, Qt::FastTransformation)));
  m_view->adjustSize();
}

void LabelPanel::moveBy(int delta) {
  int row = m_thumbs->currentRow();
  for (int i = row + delta; i >= 0 && i < m_thumbs->count(); i += delta)
    if (!m_thumbs->item(i)->isHidden()) {
      m_thumbs->setCurrentRow(i);
      return;
    }
}

// After a change to these images: their thumbnails, the view, the counts.
void LabelPanel::afterChange(const QStringList& images) {
  for (const QString& i : images)
    if (QListWidgetItem* item = itemOf(i)) refreshItem(item);
  if (!images.isEmpty() && itemOf(images.front())) m_thumbs->setCurrentItem(itemOf(images.front()));
  showCurrent();
  applyFilter();
  refreshAll();
}

void LabelPanel::labelCurrent(int classIndex) {
  const QString image = currentImage();
  if (image.isEmpty() || classIndex < 0 || classIndex >= m_session->classes().size()) return;
  m_session->setLabel(image, m_session->classes()[classIndex]);
  labelledMoveOn();
}

// The current image was labelled: its thumbnail, then the next image shown.
void LabelPanel::labelledMoveOn() {
  refreshItem(m_thumbs->currentItem());
  const int row = m_thumbs->currentRow();
  moveBy(1);
  if (m_thumbs->currentRow() == row) showCurrent();
  applyFilter();
  refreshAll();
}

void LabelPanel::boxesEdited(const ImageBoxes& boxes) {
  const QString image = currentImage();
  if (!m_boxes || image.isEmpty()) return;
  try {
    m_boxes->setBoxes(image, boxes);
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The boxes of %1 were not written: %2").arg(image, QString::fromUtf8(e.what())), true);
    m_canvas->setBoxes(m_boxes->boxesOf(image).value_or(ImageBoxes{boxes.width, boxes.height, {}}));
    return;
  }
  if (QListWidgetItem* item = itemOf(image)) refreshItem(item);
  refreshAll();
}

bool LabelPanel::boxKey(int k) {
  const QString image = currentImage();
  if (k >= Qt::Key_1 && k <= Qt::Key_9) {
    const int64_t id = m_boxes->categoryAt(k - Qt::Key_1);
    if (id < 0) return true;
    m_canvas->setCurrentCategory(id);
    m_canvas->setSelectedCategory(id);  // edited() writes it
  } else if (k == Qt::Key_Delete || k == Qt::Key_Backspace) {
    if (!m_canvas->removeSelected() && !image.isEmpty()) {
      m_boxes->clear(image);
      afterChange({image});
    }
  } else if ((k == Qt::Key_Return || k == Qt::Key_Enter || k == Qt::Key_A) && !image.isEmpty()) {
    // Done with the image: its proposals taken, and labelled even with no box (nothing to find).
    if (!m_boxes->acceptProposals(image, m_image.width(), m_image.height()) && !m_boxes->isLabelled(image))
      m_boxes->setBoxes(image, m_canvas->boxes());
    labelledMoveOn();
  } else {
    return false;
  }
  return true;
}

bool LabelPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_scroll->viewport() && event->type() == QEvent::Resize) fitView();
  if (event->type() != QEvent::KeyPress || !m_editor) return QWidget::eventFilter(watched, event);
  auto* key = static_cast<QKeyEvent*>(event);
  const int k = key->key();
  const QString image = currentImage();
  try {
    if (m_boxes && boxKey(k)) return true;
    if (k >= Qt::Key_1 && k <= Qt::Key_9) {
      labelCurrent(k - Qt::Key_1);
    } else if (k == Qt::Key_Left || k == Qt::Key_Up) {
      moveBy(-1);
    } else if (k == Qt::Key_Right || k == Qt::Key_Down) {
      moveBy(1);
    } else if ((k == Qt::Key_Delete || k == Qt::Key_Backspace) && !image.isEmpty()) {
      m_session->clearLabel(image);
      afterChange({image});
    } else if (k == Qt::Key_Z) {
      afterChange(key->modifiers() & Qt::ShiftModifier ? m_editor->redo() : m_editor->undo());
    } else if ((k == Qt::Key_Return || k == Qt::Key_Enter || k == Qt::Key_A) && !image.isEmpty()) {
      if (const ClassProposal* p = m_session->proposalOf(image))
        labelCurrent(static_cast<int>(m_session->classes().indexOf(p->label)));
    } else if (k == Qt::Key_Plus || k == Qt::Key_Equal || k == Qt::Key_Minus) {
      m_zoom = std::clamp(k == Qt::Key_Minus ? m_zoom / 1.25 : m_zoom * 1.25, 0.25, 16.0);
      fitView();
    } else {
      return QWidget::eventFilter(watched, event);
    }
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The labels file was not changed: %1").arg(QString::fromUtf8(e.what())), true);
  }
  return true;
}

void LabelPanel::setBusy(bool busy, const QString& what) {
  m_busy = busy;
  if (busy)
    m_where->setText(what);
  else if (m_editor)
    m_where->setText(tr("%1 — labels in %2").arg(m_editor->folder(), m_editor->labelsFile()));
  refreshAll();
}

}  // namespace studio::ui
