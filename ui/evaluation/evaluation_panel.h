#pragma once
// The Evaluation tab: for one run, any of its evaluations (the newest while
// it trains): the confusion matrix (counts or row-normalised, a QCustomPlot
// colour map), precision, recall, F1 and one-vs-rest accuracy per class, and
// the examples it got wrong with the most confidence (thumbnails for images).
// A regression's evaluation shows predicted against actual and the
// residuals instead (ui/evaluation/regression_view.h); a multi-label's, each label's
// figures and precision-recall and ROC curves (ui/evaluation/labels_view.h);
// a detector's, COCO's figures, each class's AP and precision-recall curve
// (ui/evaluation/detection_view.h), and on request its test images with
// their true boxes and those found, worst first (test_boxes_view.h).
// A classifier's evaluation also shows each class's one-vs-rest ROC and PR
// curves and the reliability diagram with its calibration error.
// For several runs of one task kind: each class's (label's, target's) figure
// side by side, from each run's last evaluation (compared_figures.h); runs
// of another kind are named, not compared. Everything is read from the run folders
// (eval/step-<N>.json), so a past run shows what a live one showed.
// Thread: the UI thread.

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

#include "studio/eval_report.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QGridLayout;
class QLabel;
class QStackedWidget;
class QTabWidget;
class QTableWidget;

namespace studio::ui {

class CalibrationView;
class ComparisonView;
class DetectionView;
class TestBoxesView;
class LabelsView;
class RegressionView;
class SegmentationView;
class TestMasksView;

// Evaluation steps a run folder holds, oldest first.
std::vector<int64_t> evaluationSteps(const QString& runDir);

class EvaluationPanel : public QWidget {
  Q_OBJECT

 public:
  explicit EvaluationPanel(QWidget* parent = nullptr);

  // One run: lists its evaluations and shows the newest.
  void showRun(const QString& runDir, const QString& label);
  // A new evaluation of the run shown (the live run).
  void evaluationArrived(const QString& runDir, int64_t step);
  // The live run ended: its evaluations are read again, so its test report
  // (written last, at its last step) shows where the tab followed the newest.
  void runEnded(const QString& runDir);
  // Several runs side by side.
  void compareRuns(const QStringList& runDirs, const QStringList& labels);
  void clear();

  void setRowNormalized(bool on);
  const std::optional<EvalReport>& report() const { return m_report; }
  QString shownRun() const { return m_run; }
  // The matrix as drawn ([true][predicted]).
  std::vector<std::vector<double>> drawnMatrix() const;
  int mistakesShown() const;
  QTableWidget* classTable() const { return m_classes; }
  QTableWidget* comparisonTable() const;
  QComboBox* stepChooser() const { return m_steps; }
  // A regression run's page (task.kind regression).
  RegressionView* regressionView() const { return m_regression; }
  bool showsRegression() const;
  // A multi-label run's page (task.kind multilabel).
  LabelsView* labelsView() const { return m_labels; }
  bool showsLabels() const;
  // A detector's run: each class's AP and precision-recall curve.
  DetectionView* detectionView() const { return m_detection; }
  // Its test images, their true boxes and the boxes found (on request).
  TestBoxesView* testBoxesView() const { return m_testBoxes; }
  bool showsDetection() const;
  // A segmenter's run: each class's IoU and where its pixels went.
  SegmentationView* segmentationView() const { return m_segmentation; }
  TestMasksView* testMasksView() const { return m_testMasks; }
  bool showsSegmentation() const;
  // A classifier's one-vs-rest ROC and PR curves and its reliability diagram,
  // tabs beside the confusion matrix.
  LabelsView* classCurvesView() const { return m_classCurves; }
  CalibrationView* calibrationView() const { return m_calibration; }
  QTabWidget* classificationViews() const { return m_views; }

 protected:
  void changeEvent(QEvent* event) override;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void showStep(int64_t step);
  void drawMatrix();
  void fillClasses();
  void fillMistakes();
  void setMessage(const QString& text);

  QString m_run, m_label;
  std::optional<EvalReport> m_report;
  QImage m_thumbnails;
  bool m_rowNormalized = false;
  bool m_redrawing = false;
  QLabel* m_message;
  QComboBox* m_steps;
  QCheckBox* m_normalize;
  QStackedWidget* m_pages;
  QCustomPlot* m_matrix;
  QCPColorMap* m_map = nullptr;
  QTableWidget* m_classes;
  QWidget* m_mistakesHost;
  QGridLayout* m_mistakes;
  ComparisonView* m_comparison;
  RegressionView* m_regression;
  LabelsView* m_labels;
  DetectionView* m_detection;
  TestBoxesView* m_testBoxes;
  SegmentationView* m_segmentation;
  TestMasksView* m_testMasks;
  QTabWidget* m_views;
  LabelsView* m_classCurves;
  CalibrationView* m_calibration;
};

}  // namespace studio::ui
