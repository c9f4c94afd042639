#include "ui/evaluation/evaluation_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "studio/run_layout.h"
#include "ui/charts/plot_palette.h"
#include "ui/evaluation/calibration_view.h"
#include "ui/evaluation/comparison_view.h"
#include "ui/evaluation/detection_view.h"
#include "ui/evaluation/figure_cells.h"
#include "ui/evaluation/labels_view.h"
#include "ui/evaluation/regression_view.h"
#include "ui/evaluation/segmentation_view.h"
#include "ui/evaluation/test_boxes_view.h"
#include "ui/evaluation/test_masks_view.h"

namespace studio::ui {
namespace {

constexpr int kRegressionPage = 2, kLabelsPage = 3, kDetectionPage = 4, kSegmentationPage = 5;

// "test, with the best checkpoint's weights (step 80)": the split and, for a
// report of other weights than the step's own, whose they are.
QString splitText(const EvalReport& r) {
  const QString split = QString::fromStdString(r.split);
  if (r.weights == "best")
    return QObject::tr("%1, with the best checkpoint's weights (step %2),").arg(split).arg(r.weightsStep);
  return split;
}
}  // namespace

std::vector<int64_t> evaluationSteps(const QString& runDir) {
  std::vector<int64_t> steps;
  const QDir dir(runDir + "/" + run_files::kEvalFolder);
  for (const QString& f : dir.entryList({"step-*.json"}, QDir::Files)) {
    bool ok = false;
    const int64_t step = f.mid(5, f.size() - 10).toLongLong(&ok);
    if (ok) steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

EvaluationPanel::EvaluationPanel(QWidget* parent) : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_message = new QLabel;
  m_message->setObjectName("evaluationMessage");
  m_message->setWordWrap(true);
  bar->addWidget(m_message, 1);
  bar->addWidget(new QLabel(tr("Evaluation:")));
  m_steps = new QComboBox;
  m_steps->setObjectName("evaluationStep");
  m_steps->setToolTip(tr("Which evaluation of the run to show (the newest while it trains)."));
  m_steps->setFocusPolicy(Qt::StrongFocus);
  bar->addWidget(m_steps);
  m_normalize = new QCheckBox(tr("Row-normalised"));
  m_normalize->setObjectName("rowNormalized");
  m_normalize->setToolTip(tr("Each row as shares of its true class (recall on the diagonal) instead of counts."));
  bar->addWidget(m_normalize);
  top->addLayout(bar);
  connect(m_steps, &QComboBox::activated, this, [this](int i) { showStep(m_steps->itemData(i).toLongLong()); });
  connect(m_normalize, &QCheckBox::toggled, this, &EvaluationPanel::setRowNormalized);

  m_pages = new QStackedWidget;
  // One run.
  auto* single = new QSplitter(Qt::Vertical);
  auto* upper = new QSplitter(Qt::Horizontal);
  m_matrix = new QCustomPlot;
  m_matrix->setObjectName("confusionMatrix");
  m_matrix->setMinimumSize(220, 150);  // the window fits a 1280x720 screen (issue 29)
  m_matrix->installEventFilter(this);  // its numbers fit its cells again when it is resized
  m_matrix->plotLayout()->insertRow(0);
  m_matrix->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(m_matrix, tr("Confusion matrix"), QFont(font().family(), font().pointSize(), QFont::Bold)));
  m_matrix->xAxis->setLabel(tr("predicted"));
  m_matrix->yAxis->setLabel(tr("true"));
  m_matrix->yAxis->setRangeReversed(true);
  m_map = new QCPColorMap(m_matrix->xAxis, m_matrix->yAxis);
  // Light for few, dark blue for many (ColorBrewer's Blues): readable numbers on both.
  QCPColorGradient blues;
  blues.setColorStopAt(0.0, QColor(247, 251, 255));
  blues.setColorStopAt(0.5, QColor(107, 174, 214));
  blues.setColorStopAt(1.0, QColor(8, 48, 107));
  m_map->setGradient(blues);
  m_map->setInterpolate(false);
  m_views = new QTabWidget;
  m_views->setObjectName("classificationViews");
  m_views->addTab(m_matrix, tr("Confusion matrix"));
  m_classCurves = new LabelsView(/*classes=*/true);
  m_views->addTab(m_classCurves, tr("ROC \u00b7 PR"));
  m_calibration = new CalibrationView;
  m_views->addTab(m_calibration, tr("Calibration"));
  upper->addWidget(m_views);
  m_classes =
      figureTable({tr("Class"), tr("Examples"), tr("Precision"), tr("Recall"), tr("F1"), tr("Accuracy (one vs rest)")},
                  "classFigures");
  upper->addWidget(m_classes);
  upper->setStretchFactor(0, 3);
  upper->setStretchFactor(1, 2);
  single->addWidget(upper);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  m_mistakesHost = new QWidget;
  m_mistakes = new QGridLayout(m_mistakesHost);
  m_mistakes->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  scroll->setWidget(m_mistakesHost);
  scroll->setMinimumHeight(80);
  single->addWidget(scroll);
  single->setStretchFactor(0, 3);
  single->setStretchFactor(1, 1);
  m_pages->addWidget(single);
  // Several runs.
  m_comparison = new ComparisonView;
  m_pages->addWidget(m_comparison);
  m_regression = new RegressionView;
  m_pages->addWidget(m_regression);
  m_labels = new LabelsView;
  m_pages->addWidget(m_labels);
  // A detector's: its curves above its test images' boxes, scrolled
  // together on a small screen (the window fits 1280x720).
  const auto scrolledPair = [](QWidget* above, QWidget* below) {
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(above);
    split->addWidget(below);
    auto* scroll = new QScrollArea;
    scroll->setWidget(split);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
  };
  m_detection = new DetectionView;
  m_testBoxes = new TestBoxesView;
  m_pages->addWidget(scrolledPair(m_detection, m_testBoxes));
  // A segmenter's: its figures above its test images' masks, scrolled together.
  m_segmentation = new SegmentationView;
  m_testMasks = new TestMasksView;
  m_pages->addWidget(scrolledPair(m_segmentation, m_testMasks));
  top->addWidget(m_pages, 1);
  applyPlotPalette(m_matrix, palette());
  clear();
}

void EvaluationPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_matrix, palette());
    m_matrix->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

void EvaluationPanel::setMessage(const QString& text) { m_message->setText(text); }

bool EvaluationPanel::showsRegression() const { return m_pages->currentIndex() == kRegressionPage; }
bool EvaluationPanel::showsLabels() const { return m_pages->currentIndex() == kLabelsPage; }
bool EvaluationPanel::showsDetection() const { return m_pages->currentIndex() == kDetectionPage; }
bool EvaluationPanel::showsSegmentation() const { return m_pages->currentIndex() == kSegmentationPage; }

void EvaluationPanel::clear() {
  m_run.clear();
  m_report.reset();
  m_steps->clear();
  m_pages->setCurrentIndex(0);
  m_map->data()->clear();
  m_classes->setRowCount(0);
  m_regression->clear();
  m_labels->clear();
  m_detection->clear();
  m_segmentation->clear();
  fillMistakes();
  setMessage(
      tr("No evaluation yet: a run evaluates at the end of each epoch (or every N steps, see Evaluation "
         "in the settings)."));
  m_matrix->replot();
}

void EvaluationPanel::showRun(const QString& runDir, const QString& label) {
  const bool same = runDir == m_run;
  m_run = runDir;
  m_label = label;
  m_pages->setCurrentIndex(0);
  const std::vector<int64_t> steps = evaluationSteps(runDir);
  const int64_t keep = same && m_report ? m_report->step : -1;
  m_steps->clear();
  for (int64_t s : steps) m_steps->addItem(tr("step %1").arg(s), QVariant::fromValue<qlonglong>(s));
  if (steps.empty()) {
    m_report.reset();
    m_map->data()->clear();
    m_classes->setRowCount(0);
    fillMistakes();
    setMessage(tr("%1 has no evaluation yet.").arg(label));
    m_matrix->replot();
    return;
  }
  const bool had = std::find(steps.begin(), steps.end(), keep) != steps.end();
  showStep(had ? keep : steps.back());
}

void EvaluationPanel::evaluationArrived(const QString& runDir, int64_t step) {
  if (runDir != m_run) return;
  // Follow the newest unless the person chose an older one.
  const bool following = !m_report || m_steps->currentIndex() == m_steps->count() - 1;
  // showRun may have listed it already (its file was written before its
  // record arrived): listed twice, the newest would no longer be followed.
  if (m_steps->findData(QVariant::fromValue<qlonglong>(step)) < 0)
    m_steps->addItem(tr("step %1").arg(step), QVariant::fromValue<qlonglong>(step));
  // A run that ended before the window heard it start: showRun listed all of
  // its evaluations and showed the last, and their records come after; an
  // older one must not take the tab back (it then stopped following).
  if (following && (!m_report || step >= m_report->step)) showStep(step);
}

void EvaluationPanel::runEnded(const QString& runDir) {
  if (QDir(runDir).absolutePath() != QDir(m_run).absolutePath()) return;
  const bool following = !m_report || m_steps->currentIndex() == m_steps->count() - 1;
  const std::vector<int64_t> steps = evaluationSteps(m_run);
  if (steps.empty()) return;
  for (int64_t s : steps)
    if (m_steps->findData(QVariant::fromValue<qlonglong>(s)) < 0)
      m_steps->addItem(tr("step %1").arg(s), QVariant::fromValue<qlonglong>(s));
  showStep(following || !m_report ? steps.back() : m_report->step);
}

void EvaluationPanel::showStep(int64_t step) {
  const QString file = m_run + "/" + QString::fromStdString(run_files::evalReport(step));
  try {
    m_report = readEvalReport(file.toStdString());
  } catch (const std::exception& e) {
    m_report.reset();
    setMessage(QString::fromStdString(e.what()));
    return;
  }
  const int i = m_steps->findData(QVariant::fromValue<qlonglong>(step));
  if (i >= 0) m_steps->setCurrentIndex(i);
  if (m_report->task == TaskKind::regression) {
    m_pages->setCurrentIndex(kRegressionPage);
    m_normalize->hide();
    setMessage(tr("%1 — %2 at step %3 (epoch %4): R\u00b2 %5, RMSE %6, MAE %7, loss %8, %9 examples")
                   .arg(m_label, splitText(*m_report))
                   .arg(m_report->step)
                   .arg(m_report->epoch + 0)
                   .arg(m_report->r2, 0, 'f', 4)
                   .arg(m_report->rmse, 0, 'g', 4)
                   .arg(m_report->mae, 0, 'g', 4)
                   .arg(m_report->loss, 0, 'g', 4)
                   .arg(m_report->examples));
    m_regression->show(*m_report);
    return;
  }
  if (boxesTask(m_report->task)) {
    // COCO's figures, each class's AP and precision-recall curve (an
    // instance segmentation's masks' mAP and AP50 first).
    m_pages->setCurrentIndex(kDetectionPage);
    m_normalize->hide();
    QStringList perClass;
    for (size_t i = 0; i < m_report->apPerClass.size() && i < m_report->classes.size(); ++i)
      perClass << tr("%1 %2").arg(QString::fromStdString(m_report->classes[i])).arg(m_report->apPerClass[i], 0, 'f', 3);
    const auto stat = [this](size_t i) { return i < m_report->coco.size() ? m_report->coco[i] : qQNaN(); };
    const QString masks = m_report->maskCoco.size() > 1 ? tr("mask mAP %1, mask AP50 %2; boxes: ")
                                                              .arg(m_report->maskCoco[0], 0, 'f', 4)
                                                              .arg(m_report->maskCoco[1], 0, 'f', 4)
                                                        : QString();
    setMessage(tr("%1 — %2 at step %3 (epoch %4): %10mAP %5, AP50 %6, AP75 %7, %8 images; AP per class: %9")
                   .arg(m_label, splitText(*m_report))
                   .arg(m_report->step)
                   .arg(m_report->epoch + 0)
                   .arg(stat(0), 0, 'f', 4)
                   .arg(stat(1), 0, 'f', 4)
                   .arg(stat(2), 0, 'f', 4)
                   .arg(m_report->examples)
                   .arg(perClass.join(", "))
                   .arg(masks));
    m_detection->show(*m_report);
    m_testBoxes->setRun(m_run);
    return;
  }
  if (m_report->task == TaskKind::segmentation) {
    m_pages->setCurrentIndex(kSegmentationPage);
    m_normalize->hide();
    const SegmentationFigures& f = m_report->segmentation;
    setMessage(tr("%1 — %2 at step %3 (epoch %4): mean IoU %5, pixel accuracy %6, Dice %7, loss %8, %9 images")
                   .arg(m_label, splitText(*m_report))
                   .arg(m_report->step)
                   .arg(m_report->epoch + 0)
                   .arg(f.meanIou, 0, 'f', 4)
                   .arg(percentText(f.pixelAccuracy))
                   .arg(f.meanDice, 0, 'f', 4)
                   .arg(m_report->loss, 0, 'g', 4)
                   .arg(m_report->examples));
    m_segmentation->show(*m_report);
    m_testMasks->setRun(m_run);
    return;
  }
  if (m_report->task == TaskKind::multilabel) {
    m_pages->setCurrentIndex(kLabelsPage);
    m_normalize->hide();
    setMessage(tr("%1 — %2 at step %3 (epoch %4): mAP %5, F1 %6 (micro %7), subset accuracy %8, loss %9, "
                  "%10 examples")
                   .arg(m_label, splitText(*m_report))
                   .arg(m_report->step)
                   .arg(m_report->epoch + 0)
                   .arg(m_report->map, 0, 'f', 4)
                   .arg(m_report->macroF1, 0, 'f', 4)
                   .arg(m_report->microF1, 0, 'f', 4)
                   .arg(percentText(m_report->accuracy))
                   .arg(m_report->loss, 0, 'g', 4)
                   .arg(m_report->examples));
    m_labels->show(*m_report);
    return;
  }
  m_pages->setCurrentIndex(0);
  m_normalize->show();
  m_thumbnails =
      m_report->thumbnails.empty()
          ? QImage()
          : QImage(m_run + "/" + run_files::kEvalFolder + "/" + QString::fromStdString(m_report->thumbnails));
  setMessage(tr("%1 — %2 at step %3 (epoch %4): accuracy %5, loss %6, %7 examples")
                 .arg(m_label, splitText(*m_report))
                 .arg(m_report->step)
                 .arg(m_report->epoch + 0)
                 .arg(percentText(m_report->accuracy))
                 .arg(m_report->loss, 0, 'g', 4)
                 .arg(m_report->examples));
  drawMatrix();
  fillClasses();
  fillMistakes();
  // The classes one-vs-rest, as labels (no threshold: the top class decides).
  EvalReport curves;
  for (const ClassFigures& c : m_report->perClass) {
    LabelFigures f;
    f.name = c.name;
    f.support = c.support;
    f.predicted = c.predicted;
    f.correct = c.correct;
    f.precision = c.precision;
    f.recall = c.recall;
    f.f1 = c.f1;
    f.averagePrecision = c.averagePrecision;
    f.rocAuc = c.rocAuc;
    f.threshold = f.bestThreshold = std::nan("");
    f.roc = c.roc;
    f.pr = c.pr;
    curves.labels.push_back(std::move(f));
  }
  m_classCurves->show(curves);
  m_calibration->show(m_report->reliability);
}

void EvaluationPanel::setRowNormalized(bool on) {
  if (m_normalize->isChecked() != on) m_normalize->setChecked(on);
  m_rowNormalized = on;
  drawMatrix();
}

void EvaluationPanel::drawMatrix() {
  for (int i = m_matrix->itemCount() - 1; i >= 0; --i) m_matrix->removeItem(i);
  // A classifier's matrix only: another task's report (a detector's, shown
  // before this page is left) has classes but no confusion (issue 60).
  const auto square = [](const EvalReport& r) {
    return r.confusion.size() == r.classes.size() &&
           std::all_of(r.confusion.begin(), r.confusion.end(),
                       [&](const std::vector<int64_t>& row) { return row.size() == r.classes.size(); });
  };
  if (!m_report || m_report->task != TaskKind::classification || !square(*m_report)) {
    m_map->data()->clear();
    m_matrix->replot();
    return;
  }
  const auto& r = *m_report;
  const int k = static_cast<int>(r.classes.size());
  m_map->data()->setSize(k, k);
  m_map->data()->setRange(QCPRange(0, k - 1), QCPRange(0, k - 1));
  const auto values = drawnMatrix();
  double top = 0;
  for (int t = 0; t < k; ++t)
    for (int p = 0; p < k; ++p) {
      const double v = values[static_cast<size_t>(t)][static_cast<size_t>(p)];
      m_map->data()->setCell(p, t, v);
      top = std::max(top, v);
    }
  m_map->setDataRange(QCPRange(0, std::max(top, 1e-9)));
  m_matrix->xAxis->setTicker(nameTicker(r.classes));
  m_matrix->yAxis->setTicker(nameTicker(r.classes));
  // Slanted labels end at their tick (the last one stays inside the plot);
  // the left margin has room for the first one's slant.
  const double slant = k > 6 ? 40 : 0;
  m_matrix->xAxis->setTickLabelRotation(-slant);
  const QFontMetrics labels(m_matrix->xAxis->tickLabelFont());
  int widest = 0;
  for (const auto& name : r.classes) widest = std::max(widest, labels.horizontalAdvance(QString::fromStdString(name)));
  m_matrix->axisRect()->setMinimumMargins(
      QMargins(static_cast<int>(widest * std::cos(slant * M_PI / 180)) + 8, 0, 0, 0));
  m_matrix->xAxis->setRange(-0.5, k - 0.5);
  m_matrix->yAxis->setRange(-0.5, k - 0.5);
  m_matrix->replot();  // lays the axes out: the cells' size below is known
  // The numbers in the cells while they fit: the font shrinks to the cell's
  // width, and below 6 points they are left out.
  const double cell = std::min(m_matrix->axisRect()->width(), m_matrix->axisRect()->height()) / static_cast<double>(k);
  QString longest;
  for (const auto& row : values)
    for (double v : row) {
      const QString text = m_rowNormalized ? QString::number(v, 'f', 2) : QString::number(static_cast<qlonglong>(v));
      if (text.size() > longest.size()) longest = text;
    }
  QFont small = font();
  double points = font().pointSizeF() - 1.0;
  for (; points >= 6.0; points -= 0.5) {
    small.setPointSizeF(points);
    if (QFontMetrics(small).horizontalAdvance(longest) <= 0.85 * cell) break;
  }
  if (points >= 6.0) {
    const QColor light(255, 255, 255), dark(20, 20, 20);
    for (int t = 0; t < k; ++t)
      for (int p = 0; p < k; ++p) {
        const double v = values[static_cast<size_t>(t)][static_cast<size_t>(p)];
        auto* text = new QCPItemText(m_matrix);
        text->position->setCoords(p, t);
        text->setText(m_rowNormalized ? QString::number(v, 'f', 2) : QString::number(static_cast<qlonglong>(v)));
        text->setFont(small);
        text->setColor(v > 0.45 * top ? light : dark);
      }
  }
  m_matrix->xAxis->grid()->setVisible(false);
  m_matrix->yAxis->grid()->setVisible(false);
  m_matrix->replot();
}

std::vector<std::vector<double>> EvaluationPanel::drawnMatrix() const {
  std::vector<std::vector<double>> out;
  if (!m_report) return out;
  for (const auto& row : m_report->confusion) {
    double total = 0;
    for (int64_t v : row) total += static_cast<double>(v);
    std::vector<double> r;
    for (int64_t v : row)
      r.push_back(m_rowNormalized ? (total > 0 ? static_cast<double>(v) / total : 0.0) : static_cast<double>(v));
    out.push_back(r);
  }
  return out;
}

void EvaluationPanel::fillClasses() {
  m_classes->setRowCount(m_report ? static_cast<int>(m_report->perClass.size()) : 0);
  if (!m_report) return;
  for (size_t i = 0; i < m_report->perClass.size(); ++i) {
    const ClassFigures& f = m_report->perClass[i];
    const int row = static_cast<int>(i);
    m_classes->setItem(row, 0, figureCell(QString::fromStdString(f.name)));
    m_classes->setItem(row, 1, figureCell(QString::number(f.support), true));
    m_classes->setItem(row, 2, figureCell(percentText(f.precision), true));
    m_classes->setItem(row, 3, figureCell(percentText(f.recall), true));
    m_classes->setItem(row, 4, figureCell(percentText(f.f1), true));
    m_classes->setItem(row, 5, figureCell(percentText(f.accuracy), true));
  }
}

void EvaluationPanel::fillMistakes() {
  while (QLayoutItem* item = m_mistakes->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  if (!m_report || m_report->wrong.empty()) return;
  auto* title = new QLabel(tr("Most confidently wrong:"));
  m_mistakes->addWidget(title, 0, 0, 1, -1);
  const int h = static_cast<int>(m_report->thumbnailHeight), w = static_cast<int>(m_report->thumbnailWidth);
  for (size_t i = 0; i < m_report->wrong.size(); ++i) {
    const WrongExample& e = m_report->wrong[i];
    auto* box = new QWidget;
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(2, 2, 2, 2);
    if (!m_thumbnails.isNull() && w > 0) {
      auto* picture = new QLabel;
      const QImage one = m_thumbnails.copy(static_cast<int>(i) * w, 0, w, h);
      picture->setPixmap(QPixmap::fromImage(one.scaled(std::max(w, 48), std::max(h, 48), Qt::KeepAspectRatio)));
      v->addWidget(picture, 0, Qt::AlignHCenter);
    }
    auto* caption = new QLabel(tr("%1 → %2\n%3")
                                   .arg(QString::fromStdString(m_report->classes[static_cast<size_t>(e.truth)]),
                                        QString::fromStdString(m_report->classes[static_cast<size_t>(e.predicted)]),
                                        percentText(e.confidence)));
    caption->setAlignment(Qt::AlignHCenter);
    v->addWidget(caption);
    box->setToolTip(tr("%1\ntrue: %2, predicted: %3 with probability %4")
                        .arg(QString::fromStdString(e.source),
                             QString::fromStdString(m_report->classes[static_cast<size_t>(e.truth)]),
                             QString::fromStdString(m_report->classes[static_cast<size_t>(e.predicted)]),
                             percentText(e.confidence)));
    m_mistakes->addWidget(box, 1 + static_cast<int>(i) / 8, static_cast<int>(i) % 8);
  }
}

QTableWidget* EvaluationPanel::comparisonTable() const { return m_comparison->table(); }

int EvaluationPanel::mistakesShown() const { return m_report ? static_cast<int>(m_report->wrong.size()) : 0; }

void EvaluationPanel::compareRuns(const QStringList& runDirs, const QStringList& labels) {
  m_run.clear();
  m_report.reset();
  m_steps->clear();
  m_pages->setCurrentIndex(1);
  m_normalize->hide();
  setMessage(m_comparison->compare(runDirs, labels));
}

bool EvaluationPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_matrix && event->type() == QEvent::Resize && m_report && !m_redrawing) {
    m_redrawing = true;
    drawMatrix();
    m_redrawing = false;
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace studio::ui
