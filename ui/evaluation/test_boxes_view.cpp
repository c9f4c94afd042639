#include "ui/evaluation/test_boxes_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QTableWidget>

#include "studio/box_match.h"
#include "studio/data_plan.h"
#include "studio/run_layout.h"
#include "studio/train_config.h"
#include "ui/common/mask_drawing.h"
#include "ui/common/number_item.h"

namespace studio::ui {
namespace {

enum Column { kImageColumn, kErrorsColumn, kTrueColumn, kFoundColumn, kMissedColumn, kFalseColumn };

}  // namespace

TestBoxesView::TestBoxesView(QWidget* parent)
    : TestImagesView("testBoxes", tr("Find the test images' boxes"),
                     tr("Runs the detector (the weights of the run's test figures) on the test split's images"),
                     tr("The test images with their true boxes and the boxes found (an instance segmentation's "
                        "masks under them), worst first."),
                     {tr("Image"), tr("Errors"), tr("True"), tr("Found"), tr("Missed"), tr("False positives")},
                     parent) {
  m_score = new QSlider(Qt::Horizontal);
  m_score->setObjectName("testBoxesScore");
  m_score->setRange(0, 100);
  m_score->setValue(50);
  m_score->setToolTip(tr("The lowest score of a box found that counts and is drawn"));
  m_top->addWidget(new QLabel(tr("Score at least")));
  m_top->addWidget(m_score, 1);
  connect(m_score, &QSlider::valueChanged, this, &TestBoxesView::fill);
}

TestBoxesView::~TestBoxesView() = default;

void TestBoxesView::findBoxes() {
  if (!startFinding(tr("Finding the boxes of the test images…"))) return;
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
            f.truthMasks.emplace_back();
            for (size_t i = 0; i < a.boxes.size(); ++i) {
              const AnnotatedBox& b = a.boxes[i];
              if (b.image != item || b.crowd) continue;
              f.truth.back().push_back({b.x, b.y, b.w, b.h, b.label, -1});
              if (i < a.masks.size()) f.truthMasks.back().emplace_back(a.masks[i], b.label);
            }
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
        m_found = f;
        if (f.report) fill();
        finishFinding(f.report.has_value(), f.error, f.report ? static_cast<int>(f.report->rows.size()) : 0);
      });
}

void TestBoxesView::fill() {
  if (!m_found.report) return;
  const auto& rows = m_found.report->rows;
  const double least = m_score->value() / 100.0;
  int missed = 0, falsePositives = 0, truth = 0;
  const int keep = selectedResult();
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
  const int at = selectedResult();
  if (!m_found.report || at < 0) return showNothing({});
  const auto i = static_cast<size_t>(at);
  const auto& row = m_found.report->rows[i];
  const QImage image(QString::fromStdString(row.source));
  if (!row.error.empty() || image.isNull())
    return showNothing(row.error.empty() ? tr("%1 cannot be shown").arg(QString::fromStdString(row.source))
                                         : QString::fromStdString(row.error));
  const double least = m_score->value() / 100.0;
  std::vector<DrawnBox> found;
  for (const auto& b : row.boxes)
    if (b.score >= least) found.push_back({b.x, b.y, b.width, b.height, b.label, b.score});
  // An instance segmentation's masks under their boxes, true and found.
  std::vector<std::pair<const Rle*, int64_t>> truthMasks;
  for (const auto& [mask, label] : m_found.truthMasks[i]) truthMasks.emplace_back(&mask, label);
  const size_t classes = m_found.classes.size();
  showBoth(drawBoxes(overlayInstances(image, truthMasks, classes, 0.45), m_found.truth[i], m_found.classes, kSide),
           drawBoxes(overlayFoundMasks(image, row.boxes, least, classes, 0.45), found, m_found.classes, kSide),
           truthMasks.empty() ? tr("Left: the true boxes. Right: the boxes found at the slider's score.")
                              : tr("Left: the true boxes and masks. Right: those found at the slider's score."));
}

}  // namespace studio::ui
