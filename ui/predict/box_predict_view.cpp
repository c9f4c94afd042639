#include "ui/predict/box_predict_view.h"

#include "ui/common/box_drawing.h"
#include "ui/common/mask_drawing.h"
#include "ui/common/number_item.h"
#include "ui/predict/held_predictor.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace studio::ui {
namespace {

enum ImageColumn { File, Boxes, Best, Found, Problem, ImageColumns };
enum BoxColumn { Class, Score, X, Y, Width, Height, BoxColumns };
constexpr int kRowRole = Qt::UserRole + 1;  // the image's row in the report (rows get sorted)
constexpr int kPictureSize = 420;

}  // namespace

BoxPredictView::BoxPredictView(QWidget* parent) : QWidget(parent), m_held(std::make_shared<HeldPredictor>()) {
  setObjectName("boxPredictView");
  m_images = new QTableWidget(0, ImageColumns);
  m_images->setObjectName("boxImages");
  m_images->setHorizontalHeaderLabels({tr("Image"), tr("Boxes"), tr("Best score"), tr("Found"), tr("Problem")});
  m_boxes = new QTableWidget(0, BoxColumns);
  m_boxes->setObjectName("boxList");
  m_boxes->setHorizontalHeaderLabels({tr("Class"), tr("Score"), tr("x"), tr("y"), tr("Width"), tr("Height")});
  for (QTableWidget* t : {m_images, m_boxes}) {
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->horizontalHeader()->setStretchLastSection(true);
    t->verticalHeader()->hide();
    t->setWordWrap(false);
  }
  m_images->setColumnWidth(File, 160);
  m_picture = new QLabel;
  m_picture->setObjectName("boxPicture");
  m_picture->setMinimumSize(200, 200);
  m_picture->setAlignment(Qt::AlignCenter);
  m_score = new QSlider(Qt::Horizontal);
  m_score->setObjectName("boxScore");
  m_score->setRange(0, 100);
  m_score->setValue(50);
  m_score->setToolTip(
      tr("The lowest score of the boxes shown and counted (the detector itself keeps those above its "
         "model.detector.score_threshold)"));
  m_scoreText = new QLabel;

  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(m_picture, 2);
  auto* scoreRow = new QHBoxLayout;
  scoreRow->addWidget(new QLabel(tr("Score at least")));
  scoreRow->addWidget(m_score, 1);
  scoreRow->addWidget(m_scoreText);
  sideLayout->addLayout(scoreRow);
  // An instance segmentation's masks: how strongly each is drawn over its object.
  m_opacity = new QSlider(Qt::Horizontal);
  m_opacity->setObjectName("boxMaskOpacity");
  m_opacity->setRange(0, 100);
  m_opacity->setValue(45);
  m_opacity->setToolTip(tr("How strongly each found mask is drawn over its object (0: not at all)"));
  m_opacityRow = new QWidget;
  auto* opacityRow = new QHBoxLayout(m_opacityRow);
  opacityRow->setContentsMargins(0, 0, 0, 0);
  opacityRow->addWidget(new QLabel(tr("Mask opacity")));
  opacityRow->addWidget(m_opacity, 1);
  m_opacityRow->hide();
  sideLayout->addWidget(m_opacityRow);
  sideLayout->addWidget(m_boxes, 1);
  // The picture's side scrolls on a small screen (the window fits 1280x720).
  auto* sideScroll = new QScrollArea;
  sideScroll->setWidget(side);
  sideScroll->setWidgetResizable(true);
  sideScroll->setFrameShape(QFrame::NoFrame);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_images);
  split->addWidget(sideScroll);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connect(m_images, &QTableWidget::itemSelectionChanged, this, &BoxPredictView::showSelected);
  connect(m_opacity, &QSlider::valueChanged, this, &BoxPredictView::showSelected);
  connect(m_score, &QSlider::valueChanged, this, [this] {
    if (!m_report) return;
    const int keep = selectedRow();
    fillImages();
    for (int i = 0; i < m_images->rowCount(); ++i)
      if (m_images->item(i, File)->data(kRowRole).toInt() == keep) m_images->selectRow(i);
  });
  m_scoreText->setText(QString::number(minimumScore(), 'f', 2));
}

BoxPredictView::~BoxPredictView() = default;

double BoxPredictView::minimumScore() const { return m_score->value() / 100.0; }

void BoxPredictView::predict(const QString& folder, const PredictOptions& options, const QStringList& paths,
                             bool reload) {
  m_busy = true;
  std::vector<std::string> inputs;
  for (const auto& p : paths) inputs.push_back(p.toStdString());
  m_job.start(
      [held = m_held, dir = folder.toStdString(), options, inputs, reload] {
        Outcome out;
        try {
          std::lock_guard<std::mutex> lock(held->mutex);
          Predictor& predictor = held->get(dir, options, reload);
          PredictionReport all;
          for (const auto& input : inputs) appendReport(all, predictor.predict(input));
          out.report = std::move(all);
        } catch (const std::exception& e) {
          out.error = QString::fromStdString(e.what());
        }
        return out;
      },
      [this](const Outcome& out) {
        m_busy = false;
        if (!out.report) {
          m_statusText = out.error;
          Q_EMIT message(out.error, true);
          Q_EMIT predicted(0);
          return;
        }
        m_report = out.report;
        const auto& r = *m_report;
        m_statusText = tr("%1: %2 boxes in %3 images in %4 s")
                           .arg(QString::fromStdString(r.model))
                           .arg(r.boxesFound)
                           .arg(static_cast<qlonglong>(r.rows.size()) - r.skipped)
                           .arg(r.seconds, 0, 'f', 2);
        if (r.skipped > 0) m_statusText += tr("; %1 skipped (the Problem column says why)").arg(r.skipped);
        if (!r.note.empty()) m_statusText += " (" + QString::fromStdString(r.note) + ")";
        fillImages();
        if (m_images->rowCount() > 0) m_images->selectRow(0);
        Q_EMIT message(m_statusText, false);
        Q_EMIT predicted(static_cast<int>(r.rows.size()));
      });
}

void BoxPredictView::fillImages() {
  const auto& r = *m_report;
  const double least = minimumScore();
  m_scoreText->setText(QString::number(least, 'f', 2));
  m_opacityRow->setVisible(std::any_of(r.rows.begin(), r.rows.end(), [](const PredictionRow& row) {
    return std::any_of(row.boxes.begin(), row.boxes.end(), [](const PredictedBox& b) { return b.mask.has_value(); });
  }));
  m_images->setSortingEnabled(false);
  m_images->clearContents();
  m_images->setRowCount(static_cast<int>(r.rows.size()));
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    const int k = static_cast<int>(i);
    auto* file = new QTableWidgetItem(QString::fromStdString(row.name));
    file->setToolTip(QString::fromStdString(row.source));
    file->setData(kRowRole, k);
    m_images->setItem(k, File, file);
    int shown = 0;
    QStringList found;
    for (const auto& b : row.boxes) {
      if (b.score < least) continue;
      ++shown;
      const QString name = QString::fromStdString(r.classes[static_cast<size_t>(b.label)]);
      if (!found.contains(name)) found << name;
    }
    const double best = row.boxes.empty() ? -1.0 : row.boxes.front().score;
    m_images->setItem(k, Boxes, new NumberItem(shown, row.error.empty() ? QString::number(shown) : QString()));
    m_images->setItem(k, Best, new NumberItem(best, best < 0 ? QString() : QString::number(best, 'f', 3)));
    m_images->setItem(k, Found, new QTableWidgetItem(found.join(", ")));
    m_images->setItem(k, Problem, new QTableWidgetItem(QString::fromStdString(row.error)));
  }
  m_images->setSortingEnabled(true);
  m_images->sortByColumn(Best, Qt::DescendingOrder);
}

int BoxPredictView::selectedRow() const {
  const auto selected = m_images->selectionModel() ? m_images->selectionModel()->selectedRows() : QModelIndexList{};
  if (selected.isEmpty()) return -1;
  const QTableWidgetItem* item = m_images->item(selected.front().row(), File);
  return item ? item->data(kRowRole).toInt() : -1;
}

void BoxPredictView::showSelected() {
  m_boxes->setRowCount(0);
  m_shown = QImage();
  m_picture->clear();
  const int k = selectedRow();
  if (!m_report || k < 0) return;
  const auto& r = *m_report;
  const auto& row = r.rows[static_cast<size_t>(k)];
  if (!row.error.empty()) {
    m_picture->setText(QString::fromStdString(row.error));
    return;
  }
  QImage image(QString::fromStdString(row.source));
  if (image.isNull()) {
    m_picture->setText(tr("%1 cannot be shown").arg(QString::fromStdString(row.source)));
    return;
  }
  const double least = minimumScore();
  std::vector<DrawnBox> drawn;
  for (const auto& b : row.boxes) {
    if (b.score < least) continue;
    drawn.push_back({b.x, b.y, b.width, b.height, b.label, b.score});
    const int n = m_boxes->rowCount();
    const QString name = QString::fromStdString(r.classes[static_cast<size_t>(b.label)]);
    m_boxes->insertRow(n);
    m_boxes->setItem(n, Class, new QTableWidgetItem(name));
    m_boxes->item(n, Class)->setForeground(classColour(b.label, r.classes.size()).darker(130));
    m_boxes->setItem(n, Score, new QTableWidgetItem(QString::number(b.score, 'f', 3)));
    m_boxes->setItem(n, X, new QTableWidgetItem(QString::number(b.x, 'f', 1)));
    m_boxes->setItem(n, Y, new QTableWidgetItem(QString::number(b.y, 'f', 1)));
    m_boxes->setItem(n, Width, new QTableWidgetItem(QString::number(b.width, 'f', 1)));
    m_boxes->setItem(n, Height, new QTableWidgetItem(QString::number(b.height, 'f', 1)));
  }
  // Drawn at the picture's size, so thin boxes stay visible on large photos.
  // An instance segmentation's masks under their boxes.
  const QImage shown =
      drawBoxes(overlayFoundMasks(image, row.boxes, least, r.classes.size(), m_opacity->value() / 100.0), drawn,
                r.classes, kPictureSize);
  m_shown = shown;
  m_picture->setPixmap(QPixmap::fromImage(shown));
}

bool BoxPredictView::save(const QString& path, QString* error) const {
  if (!m_report) {
    if (error) *error = tr("Nothing predicted yet");
    return false;
  }
  try {
    if (path.endsWith(".csv", Qt::CaseInsensitive))
      writeBoxesCsv(*m_report, path.toStdString());
    else
      writeCocoResults(*m_report, path.toStdString());
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

void BoxPredictView::saveChosen() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save the boxes"), "detections.json",
                                                    tr("COCO results (*.json);;A row per box (*.csv)"));
  QString error;
  if (!path.isEmpty() && !save(path, &error)) Q_EMIT message(error, true);
}

}  // namespace studio::ui
