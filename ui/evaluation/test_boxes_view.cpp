#include "ui/evaluation/test_boxes_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "studio/box_match.h"
#include "studio/data_plan.h"
#include "studio/run_layout.h"
#include "studio/train_config.h"
#include "ui/common/number_item.h"

namespace studio::ui {
namespace {

enum Column { kImageColumn, kErrorsColumn, kTrueColumn, kFoundColumn, kMissedColumn, kFalseColumn, kColumns };
constexpr int kRowRole = Qt::UserRole + 1;
constexpr int kSide = 280;  // each of the two pictures

}  // namespace

TestBoxesView::TestBoxesView(QWidget* parent) : QWidget(parent) {
  setObjectName("testBoxesView");
  m_find = new QPushButton(tr("Find the test images' boxes"));
  m_find->setObjectName("findTestBoxes");
  m_find->setToolTip(tr("Runs the detector (the weights of the run's test figures) on the test split's images"));
  m_find->setEnabled(false);
  m_status = new QLabel(tr("The test images with their true boxes and the boxes found, worst first."));
  m_status->setWordWrap(true);
  m_score = new QSlider(Qt::Horizontal);
  m_score->setObjectName("testBoxesScore");
  m_score->setRange(0, 100);
  m_score->setValue(50);
  m_score->setToolTip(tr("The lowest score of a box found that counts and is drawn"));
  m_images = new QTableWidget(0, kColumns);
  m_images->setObjectName("testBoxesTable");
  m_images->setHorizontalHeaderLabels(
      {tr("Image"), tr("Errors"), tr("True"), tr("Found"), tr("Missed"), tr("False positives")});
  m_images->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_images->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_images->setSelectionMode(QAbstractItemView::SingleSelection);
  m_images->verticalHeader()->hide();
  m_images->horizontalHeader()->setStretchLastSection(true);
  m_images->setMinimumHeight(160);
  m_picture = new QLabel;
  m_picture->setObjectName("testBoxesPicture");
  m_picture->setAlignment(Qt::AlignCenter);
  m_picture->setMinimumSize(2 * kSide / 3, kSide / 3);

  auto* top = new QHBoxLayout;
  top->addWidget(m_find);
  top->addWidget(new QLabel(tr("Score at least")));
  top->addWidget(m_score, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_images);
  split->addWidget(m_picture);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(m_status);
  layout->addWidget(split, 1);

  connect(m_find, &QPushButton::clicked, this, &TestBoxesView::findBoxes);
  connect(m_score, &QSlider::valueChanged, this, &TestBoxesView::fill);
  connect(m_images, &QTableWidget::itemSelectionChanged, this, &TestBoxesView::showSelected);
}

TestBoxesView::~TestBoxesView() = default;

QString TestBoxesView::statusText() const { return m_status->text(); }

void TestBoxesView::setRun(const QString& runDir) {
  if (runDir == m_run) return;
  m_run = runDir;
  m_found = Found{};
  m_images->setRowCount(0);
  m_picture->clear();
  m_shown = QImage();
  m_find->setEnabled(!runDir.isEmpty());
}

void TestBoxesView::findBoxes() {
  if (m_run.isEmpty() || m_busy) return;
  m_busy = true;
  m_find->setEnabled(false);
  m_status->setText(tr("Finding the boxes of the test images…"));
  m_job.start(
      [run = m_run.toStdString()] {
        Found f;
        try {
          const TrainConfig c = loadConfigFile(run + "/" + run_files::kSettings);
          const DataPlan plan = planData(c);
          const BoxAnnotations& a = plan.boxes;
          std::vector<std::string> files;
          for (const int64_t item : plan.test.items) {
            files.push_back(a.images[static_cast<size_t>(item)].file);
            f.truth.emplace_back();
            for (const auto& b : a.boxes)
              if (b.image == item && !b.crowd) f.truth.back().push_back({b.x, b.y, b.w, b.h, b.label, -1});
          }
          for (const auto& cat : a.categories) f.classes.push_back(cat.name);
          PredictOptions o;
          o.skipBad = true;
          f.report = Predictor(run, o).predictFiles(files);
        } catch (const std::exception& e) {
          f.error = QString::fromStdString(e.what());
        }
        return f;
      },
      [this](const Found& f) {
        m_busy = false;
        m_find->setEnabled(true);
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

void TestBoxesView::fill() {
  if (!m_found.report) return;
  const auto& rows = m_found.report->rows;
  const double least = m_score->value() / 100.0;
  int missed = 0, falsePositives = 0, truth = 0;
  const int keep = m_images->currentRow() >= 0 && m_images->item(m_images->currentRow(), kImageColumn)
                       ? m_images->item(m_images->currentRow(), kImageColumn)->data(kRowRole).toInt()
                       : -1;
  m_images->setSortingEnabled(false);
  m_images->clearContents();
  m_images->setRowCount(static_cast<int>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const BoxErrors e = matchBoxes(m_found.truth[i], rows[i].boxes, least);
    const int k = static_cast<int>(i);
    auto* name = new QTableWidgetItem(QString::fromStdString(rows[i].name));
    name->setData(kRowRole, k);
    name->setToolTip(rows[i].error.empty() ? QString::fromStdString(rows[i].source)
                                           : QString::fromStdString(rows[i].error));
    m_images->setItem(k, kImageColumn, name);
    m_images->setItem(k, kTrueColumn, new NumberItem(static_cast<int>(m_found.truth[i].size())));
    m_images->setItem(k, kFoundColumn, new NumberItem(e.matched + e.falsePositives));
    m_images->setItem(k, kMissedColumn, new NumberItem(e.missed));
    m_images->setItem(k, kFalseColumn, new NumberItem(e.falsePositives));
    m_images->setItem(k, kErrorsColumn, new NumberItem(e.missed + e.falsePositives));
    missed += e.missed;
    falsePositives += e.falsePositives;
    truth += static_cast<int>(m_found.truth[i].size());
  }
  // Worst first: the most errors, missed and false.
  m_images->setSortingEnabled(true);
  m_images->sortByColumn(kErrorsColumn, Qt::DescendingOrder);
  m_status->setText(tr("%1 test images, %2 true boxes: at score %3, %4 missed and %5 false positives (IoU 0.5); "
                       "%6")
                        .arg(rows.size())
                        .arg(truth)
                        .arg(least, 0, 'f', 2)
                        .arg(missed)
                        .arg(falsePositives)
                        .arg(QString::fromStdString(m_found.report->model)));
  for (int r = 0; r < m_images->rowCount(); ++r)
    if (m_images->item(r, kImageColumn)->data(kRowRole).toInt() == keep) m_images->selectRow(r);
  showSelected();
}

void TestBoxesView::showSelected() {
  m_shown = QImage();
  m_picture->clear();
  const int r = m_images->currentRow();
  if (!m_found.report || r < 0 || !m_images->item(r, kImageColumn)) return;
  const auto i = static_cast<size_t>(m_images->item(r, kImageColumn)->data(kRowRole).toInt());
  const auto& row = m_found.report->rows[i];
  const QImage image(QString::fromStdString(row.source));
  if (!row.error.empty() || image.isNull()) {
    m_picture->setText(row.error.empty() ? tr("%1 cannot be shown").arg(QString::fromStdString(row.source))
                                         : QString::fromStdString(row.error));
    return;
  }
  std::vector<DrawnBox> found;
  for (const auto& b : row.boxes)
    if (b.score >= m_score->value() / 100.0) found.push_back({b.x, b.y, b.width, b.height, b.label, b.score});
  const QImage left = drawBoxes(image, m_found.truth[i], m_found.classes, kSide);
  const QImage right = drawBoxes(image, found, m_found.classes, kSide);
  QImage both(left.width() + 8 + right.width(), std::max(left.height(), right.height()), QImage::Format_RGB32);
  both.fill(palette().color(QPalette::Window));
  QPainter paint(&both);
  paint.drawImage(0, 0, left);
  paint.drawImage(left.width() + 8, 0, right);
  paint.end();
  m_shown = both;
  m_picture->setPixmap(QPixmap::fromImage(both));
  m_picture->setToolTip(tr("Left: the true boxes. Right: the boxes found at the slider's score."));
}

}  // namespace studio::ui
