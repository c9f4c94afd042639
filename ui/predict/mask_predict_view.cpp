#include "ui/predict/mask_predict_view.h"

#include <QDir>
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

#include "ui/common/mask_drawing.h"
#include "ui/predict/held_predictor.h"

namespace studio::ui {
namespace {

enum Column { File, Classes, Problem, Columns };
constexpr int kPictureSize = 420;

}  // namespace

MaskPredictView::MaskPredictView(QWidget* parent) : QWidget(parent), m_held(std::make_shared<HeldPredictor>()) {
  setObjectName("maskPredictView");
  m_images = new QTableWidget(0, Columns);
  m_images->setObjectName("maskImages");
  m_images->setHorizontalHeaderLabels({tr("Image"), tr("Classes (share of the pixels)"), tr("Problem")});
  m_images->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_images->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_images->setSelectionMode(QAbstractItemView::SingleSelection);
  m_images->horizontalHeader()->setStretchLastSection(true);
  m_images->verticalHeader()->hide();
  m_images->setColumnWidth(File, 160);
  m_images->setColumnWidth(Classes, 260);
  m_picture = new QLabel;
  m_picture->setObjectName("maskPicture");
  m_picture->setMinimumSize(200, 200);
  m_picture->setAlignment(Qt::AlignCenter);
  m_opacity = new QSlider(Qt::Horizontal);
  m_opacity->setObjectName("maskOpacity");
  m_opacity->setRange(0, 100);
  m_opacity->setValue(50);
  m_opacity->setToolTip(tr("How strongly the mask's colours cover the photo"));
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(m_picture, 1);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Mask opacity")));
  row->addWidget(m_opacity, 1);
  sideLayout->addLayout(row);
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
  connect(m_images, &QTableWidget::itemSelectionChanged, this, &MaskPredictView::showSelected);
  connect(m_opacity, &QSlider::valueChanged, this, &MaskPredictView::showSelected);
}

MaskPredictView::~MaskPredictView() = default;

void MaskPredictView::predict(const QString& folder, const PredictOptions& options, const QStringList& paths,
                              bool reload) {
  m_busy = true;
  std::vector<std::string> inputs;
  for (const auto& p : paths) inputs.push_back(p.toStdString());
  PredictOptions o = options;
  o.keepMasks = true;
  m_job.start(
      [held = m_held, dir = folder.toStdString(), o, inputs, reload] {
        Outcome out;
        try {
          std::lock_guard<std::mutex> lock(held->mutex);
          Predictor& predictor = held->get(dir, o, reload);
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
        m_statusText = tr("%1: %2 images segmented in %3 s")
                           .arg(QString::fromStdString(r.model))
                           .arg(static_cast<qlonglong>(r.rows.size()) - r.skipped)
                           .arg(r.seconds, 0, 'f', 2);
        if (r.skipped > 0) m_statusText += tr("; %1 skipped (the Problem column says why)").arg(r.skipped);
        fillImages();
        if (m_images->rowCount() > 0) m_images->selectRow(0);
        Q_EMIT message(m_statusText, false);
        Q_EMIT predicted(static_cast<int>(r.rows.size()));
      });
}

void MaskPredictView::fillImages() {
  const auto& r = *m_report;
  m_images->clearContents();
  m_images->setRowCount(static_cast<int>(r.rows.size()));
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    const int k = static_cast<int>(i);
    auto* file = new QTableWidgetItem(QString::fromStdString(row.name));
    file->setToolTip(QString::fromStdString(row.source));
    m_images->setItem(k, File, file);
    QStringList found;
    for (size_t j = 0; j < row.top.size(); ++j)
      found << tr("%1 %2%")
                   .arg(QString::fromStdString(r.classes[static_cast<size_t>(row.top[j])]))
                   .arg(100.0 * row.probability[j], 0, 'f', 1);
    m_images->setItem(k, Classes, new QTableWidgetItem(found.join(", ")));
    m_images->setItem(k, Problem, new QTableWidgetItem(QString::fromStdString(row.error)));
  }
}

void MaskPredictView::showSelected() {
  m_shown = QImage();
  m_picture->clear();
  const auto selected = m_images->selectionModel() ? m_images->selectionModel()->selectedRows() : QModelIndexList{};
  if (!m_report || selected.isEmpty()) return;
  const auto k = static_cast<size_t>(selected.front().row());
  const auto& row = m_report->rows[k];
  if (!row.error.empty() || k >= m_report->masks.size()) {
    m_picture->setText(QString::fromStdString(row.error));
    return;
  }
  const QImage image(QString::fromStdString(row.source));
  if (image.isNull()) {
    m_picture->setText(tr("%1 cannot be shown").arg(QString::fromStdString(row.source)));
    return;
  }
  m_shown = overlayMask(image, m_report->masks[k], m_report->classes.size(), m_opacity->value() / 100.0, 0);
  m_picture->setPixmap(
      QPixmap::fromImage(m_shown.scaled(kPictureSize, kPictureSize, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

bool MaskPredictView::save(const QString& folder, QString* error) const {
  if (!m_report) {
    if (error) *error = tr("Nothing predicted yet");
    return false;
  }
  try {
    QDir().mkpath(folder);
    for (size_t i = 0; i < m_report->rows.size() && i < m_report->masks.size(); ++i) {
      if (m_report->masks[i].values.empty()) continue;
      const QString name = QFileInfo(QString::fromStdString(m_report->rows[i].name)).completeBaseName() + ".png";
      writeMaskPng(QDir(folder).filePath(name).toStdString(), m_report->masks[i], vocPalette());
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

void MaskPredictView::saveChosen() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("A folder for the masks"));
  QString error;
  if (!dir.isEmpty() && !save(dir, &error)) Q_EMIT message(error, true);
}

}  // namespace studio::ui
