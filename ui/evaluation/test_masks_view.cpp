#include "ui/evaluation/test_masks_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "studio/data_plan.h"
#include "studio/plan_masks.h"
#include "studio/run_layout.h"
#include "studio/segmentation_figures.h"
#include "studio/train_config.h"
#include "ui/common/mask_drawing.h"
#include "ui/common/number_item.h"

namespace studio::ui {
namespace {

enum MaskColumn { kMaskImageColumn, kIouColumn, kAccuracyColumn, kWrongColumn, kMaskColumns };
constexpr int kMaskRowRole = Qt::UserRole + 1;
constexpr int kMaskSide = 280;    // each of the two pictures
constexpr double kOpacity = 0.6;  // the masks over the photo
constexpr double kNothing = 2.0;  // where an image has no pixel that counts: sorted after every figure

NumberItem* figureItem(double value, bool percent) {
  if (std::isnan(value)) return new NumberItem(kNothing, QStringLiteral("-"));
  return new NumberItem(value, percent ? QString::number(value * 100, 'f', 1) + " %" : QString::number(value, 'f', 3));
}

}  // namespace

TestMasksView::TestMasksView(QWidget* parent) : QWidget(parent) {
  setObjectName("testMasksView");
  m_find = new QPushButton(tr("Find the test images' masks"));
  m_find->setObjectName("findTestMasks");
  m_find->setToolTip(tr("Runs the segmenter (the weights of the run's test figures) on the test split's images"));
  m_find->setEnabled(false);
  m_status = new QLabel(tr("The test images with their true masks and the masks found, worst first."));
  m_status->setWordWrap(true);
  m_images = new QTableWidget(0, kMaskColumns);
  m_images->setObjectName("testMasksTable");
  m_images->setHorizontalHeaderLabels({tr("Image"), tr("Mean IoU"), tr("Pixel accuracy"), tr("Pixels wrong")});
  m_images->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_images->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_images->setSelectionMode(QAbstractItemView::SingleSelection);
  m_images->verticalHeader()->hide();
  m_images->horizontalHeader()->setStretchLastSection(true);
  m_images->setMinimumHeight(160);
  m_picture = new QLabel;
  m_picture->setObjectName("testMasksPicture");
  m_picture->setAlignment(Qt::AlignCenter);
  m_picture->setMinimumSize(2 * kMaskSide / 3, kMaskSide / 3);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_images);
  split->addWidget(m_picture);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_find, 0, Qt::AlignLeft);
  layout->addWidget(m_status);
  layout->addWidget(split, 1);

  connect(m_find, &QPushButton::clicked, this, &TestMasksView::findMasks);
  connect(m_images, &QTableWidget::itemSelectionChanged, this, &TestMasksView::showSelected);
}

TestMasksView::~TestMasksView() = default;

QString TestMasksView::statusText() const { return m_status->text(); }

void TestMasksView::setRun(const QString& runDir) {
  if (runDir == m_run) return;
  m_run = runDir;
  m_found = Found{};
  m_images->setRowCount(0);
  m_picture->clear();
  m_shown = QImage();
  m_find->setEnabled(!runDir.isEmpty() && !m_busy);
}

void TestMasksView::findMasks() {
  if (m_run.isEmpty() || m_busy) return;
  m_busy = true;
  m_find->setEnabled(false);
  m_status->setText(tr("Segmenting the test images…"));
  m_job.start(
      [run = m_run.toStdString()] {
        Found f;
        try {
          const TrainConfig c = loadConfigFile(run + "/" + run_files::kSettings);
          const DataPlan plan = planData(c);
          std::vector<std::string> files;
          for (const int64_t item : plan.test.items) {
            files.push_back(plan.files[static_cast<size_t>(item)]);
            f.truth.push_back(itemMask(plan, item));
          }
          PredictOptions o;
          o.skipBad = true;
          o.keepMasks = true;
          f.report = Predictor(run, o).predictFiles(files);
          const auto classes = static_cast<int64_t>(f.report->classes.size());
          for (size_t i = 0; i < f.report->rows.size(); ++i) {
            const Mask& found = f.report->masks[i];
            const Mask& truth = f.truth[i];
            double iou = std::nan(""), accuracy = std::nan("");
            if (!found.values.empty() && found.values.size() == truth.values.size()) {
              ConfusionMatrix m(classes);
              m.add(truth.values.data(), found.values.data(), static_cast<int64_t>(found.values.size()));
              if (m.total() > 0) {
                const SegmentationFigures figures = segmentationFigures(m);
                iou = figures.meanIou;
                accuracy = figures.pixelAccuracy;
              }
            }
            f.iou.push_back(iou);
            f.accuracy.push_back(accuracy);
          }
        } catch (const std::exception& e) {
          f.report.reset();
          f.error = QString::fromStdString(e.what());
        }
        return f;
      },
      [this](const Found& f) {
        m_busy = false;
        m_find->setEnabled(!m_run.isEmpty());
        m_found = f;
        if (!f.report) {
          m_status->setText(f.error);
          Q_EMIT found(0);
          return;
        }
        fill();
        if (m_images->rowCount() > 0) m_images->selectRow(0);
        Q_EMIT found(static_cast<int>(f.report->rows.size()));
      });
}

void TestMasksView::fill() {
  const auto& rows = m_found.report->rows;
  m_images->setSortingEnabled(false);
  m_images->clearContents();
  m_images->setRowCount(static_cast<int>(rows.size()));
  int shown = 0;
  double below = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int k = static_cast<int>(i);
    auto* name = new QTableWidgetItem(QString::fromStdString(rows[i].name));
    name->setData(kMaskRowRole, k);
    name->setToolTip(rows[i].error.empty() ? QString::fromStdString(rows[i].source)
                                           : QString::fromStdString(rows[i].error));
    m_images->setItem(k, kMaskImageColumn, name);
    m_images->setItem(k, kIouColumn, figureItem(m_found.iou[i], false));
    m_images->setItem(k, kAccuracyColumn, figureItem(m_found.accuracy[i], true));
    m_images->setItem(
        k, kWrongColumn,
        figureItem(std::isnan(m_found.accuracy[i]) ? m_found.accuracy[i] : 1 - m_found.accuracy[i], true));
    if (!std::isnan(m_found.iou[i])) {
      ++shown;
      below += m_found.iou[i] < 0.5 ? 1 : 0;
    }
  }
  // Worst first: the lowest mean IoU (images with nothing that counts last).
  m_images->setSortingEnabled(true);
  m_images->sortByColumn(kIouColumn, Qt::AscendingOrder);
  m_status->setText(tr("%1 test images, %2 with pixels that count: %3 of them below a mean IoU of 0.5, worst "
                       "first; %4")
                        .arg(rows.size())
                        .arg(shown)
                        .arg(below)
                        .arg(QString::fromStdString(m_found.report->model)));
}

void TestMasksView::showSelected() {
  m_shown = QImage();
  m_picture->clear();
  const int r = m_images->currentRow();
  if (!m_found.report || r < 0 || !m_images->item(r, kMaskImageColumn)) return;
  const auto i = static_cast<size_t>(m_images->item(r, kMaskImageColumn)->data(kMaskRowRole).toInt());
  const auto& row = m_found.report->rows[i];
  const QImage image(QString::fromStdString(row.source));
  const Mask& found = m_found.report->masks[i];
  if (!row.error.empty() || image.isNull() || found.values.empty()) {
    m_picture->setText(row.error.empty() ? tr("%1 cannot be shown").arg(QString::fromStdString(row.source))
                                         : QString::fromStdString(row.error));
    return;
  }
  const size_t classes = m_found.report->classes.size();
  const QImage left = overlayMask(image, m_found.truth[i], classes, kOpacity, kMaskSide);
  const QImage right = overlayMask(image, found, classes, kOpacity, kMaskSide);
  QImage both(left.width() + 8 + right.width(), std::max(left.height(), right.height()), QImage::Format_RGB32);
  both.fill(palette().color(QPalette::Window));
  QPainter paint(&both);
  paint.drawImage(0, 0, left);
  paint.drawImage(left.width() + 8, 0, right);
  paint.end();
  m_shown = both;
  m_picture->setPixmap(QPixmap::fromImage(both));
  m_picture->setToolTip(tr("Left: the true mask. Right: the mask found."));
}

}  // namespace studio::ui
