#include "ui/evaluation/test_masks_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QTableWidget>

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

enum MaskColumn { kMaskImageColumn, kIouColumn, kAccuracyColumn, kWrongColumn };
constexpr double kOpacity = 0.6;  // the masks over the photo
constexpr double kNothing = 2.0;  // where an image has no pixel that counts: sorted after every figure

NumberItem* figureItem(double value, bool percent) {
  if (std::isnan(value)) return new NumberItem(kNothing, QStringLiteral("-"));
  return new NumberItem(value, percent ? QString::number(value * 100, 'f', 1) + " %" : QString::number(value, 'f', 3));
}

}  // namespace

TestMasksView::TestMasksView(QWidget* parent)
    : TestImagesView("testMasks", tr("Find the test images' masks"),
                     tr("Runs the segmenter (the weights of the run's test figures) on the test split's images"),
                     tr("The test images with their true masks and the masks found, worst first."),
                     {tr("Image"), tr("Mean IoU"), tr("Pixel accuracy"), tr("Pixels wrong")}, parent) {
  m_top->addStretch(1);
}

TestMasksView::~TestMasksView() = default;

void TestMasksView::findMasks() {
  if (!startFinding(tr("Segmenting the test images…"))) return;
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
        m_found = f;
        if (f.report) fill();
        finishFinding(f.report.has_value(), f.error, f.report ? static_cast<int>(f.report->rows.size()) : 0);
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
    name->setData(kRowRole, k);
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
  const int at = selectedResult();
  if (!m_found.report || at < 0) return showNothing({});
  const auto i = static_cast<size_t>(at);
  const auto& row = m_found.report->rows[i];
  const QImage image(QString::fromStdString(row.source));
  const Mask& found = m_found.report->masks[i];
  if (!row.error.empty() || image.isNull() || found.values.empty())
    return showNothing(row.error.empty() ? tr("%1 cannot be shown").arg(QString::fromStdString(row.source))
                                         : QString::fromStdString(row.error));
  const size_t classes = m_found.report->classes.size();
  showBoth(overlayMask(image, m_found.truth[i], classes, kOpacity, kSide),
           overlayMask(image, found, classes, kOpacity, kSide), tr("Left: the true mask. Right: the mask found."));
}

}  // namespace studio::ui
