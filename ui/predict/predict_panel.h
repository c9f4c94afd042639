#pragma once
// The Predict tab: what a trained model says about new files. The model is
// the run selected in the Runs list (or a run or export folder chosen with
// Model…), with its best, last or moving-average weights. Drop image files
// or folders on the tab (or Add files… / Add folder…; a CSV table for a
// table's model): each input becomes a row with its predicted class, its
// probability and the top five, sortable by confidence and filtered by class;
// files under class folders get their label and the accuracy. The selected
// image shows with its top-five bars and, for the convolutional built-ins, a
// Grad-CAM overlay of the last convolutional stage with an opacity slider.
// Save CSV… writes the predictions as training-studio-cli predict does.
// A detector's run (task.kind detection) shows its boxes instead
// (box_predict_view.h): the same model choice, drops and weights.
// Predicting and Grad-CAM run off the UI thread (background_job.h).
// Thread: the UI thread.

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

#include "studio/predict.h"
#include "ui/common/background_job.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QStackedWidget;
class QTableWidget;

namespace studio::ui {

class BoxPredictView;
class MaskPredictView;
struct HeldPredictor;

class PredictPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PredictPanel(QWidget* parent = nullptr);
  ~PredictPanel() override;

  // The run or export folder whose model predicts; earlier predictions stay
  // until new ones are made.
  void setModelFolder(const QString& folder);
  QString modelFolder() const { return m_folder; }
  // best | last | ema
  void setWeights(const QString& which);
  void setTestTimeAugmentation(const QString& tta);  // none | flip | five-crop, as predict --tta
  // Asked before each prediction with the model's folder: true when it is
  // the live run, paused, whose current weights were just written to its
  // last checkpoint (those then predict).
  void setPausedRunCheckpoint(std::function<bool(const QString& folder)> hook) { m_pausedHook = std::move(hook); }
  // Asked before a model is loaded: false (with why) when it is a TorchScript
  // file the person does not trust to run.
  using TrustCheck = std::function<bool(const QString& folder, QString* why)>;
  void setTrustCheck(TrustCheck check) { m_trustCheck = std::move(check); }
  // As a drop: image files and folders (or a CSV table); replaces the rows.
  // Choosing other weights or another test-time augmentation predicts the
  // same paths again with them. A regression's rows show their values, a
  // multi-label model's its labels at their thresholds and each label's
  // probability (the filter then picks a label).
  void predictPaths(const QStringList& paths);
  bool busy() const { return m_busy; }
  const std::optional<PredictionReport>& report() const { return m_report; }
  QTableWidget* table() const { return m_table; }
  // Shows only the rows predicted as this class ("" all).
  void setClassFilter(const QString& className);
  int visibleRows() const;
  bool saveCsv(const QString& path, QString* error = nullptr);
  // The status line: what predicted, how fast, the accuracy, or what was wrong.
  QString statusText() const;
  // Grad-CAM of the selected image, once computed (for tests).
  const std::optional<GradCamMap>& gradCam() const { return m_cam; }
  bool camBusy() const { return m_camBusy; }
  // A table row's gradient x input, once computed (for tests).
  const std::optional<FeatureAttribution>& attribution() const { return m_attribution; }
  QString explanation() const;  // the text under the picture
  QSlider* opacitySlider() const { return m_opacity; }
  QImage shownImage() const { return m_shown; }
  // A detector's view: current when the model folder is a detection run's.
  BoxPredictView* boxView() const { return m_boxView; }
  bool showsBoxes() const;
  // A segmenter's run shows its masks (mask_predict_view.h).
  MaskPredictView* maskView() const { return m_maskView; }
  bool showsMasks() const;

 Q_SIGNALS:
  void predicted(int rows);
  void message(const QString& text, bool error);

 protected:
  void dragEnterEvent(class QDragEnterEvent* event) override;
  void dropEvent(class QDropEvent* event) override;

 private:
  struct Outcome {
    std::optional<PredictionReport> report;
    std::optional<GradCamMap> cam;
    std::optional<FeatureAttribution> attribution;
    QString error;
  };
  PredictOptions options() const;
  // A job on the kept model (loaded for m_used, or again when reload), one at
  // a time; what it throws becomes the outcome's error.
  std::function<Outcome()> onModel(std::function<void(Predictor&, Outcome&)> use, bool reload = false) const;
  void fillTable();
  void showSelected();
  void drawPreview();
  void setStatus(const QString& text, bool error = false);

  QString m_folder;
  std::shared_ptr<HeldPredictor> m_held;  // the model, kept between jobs
  std::function<bool(const QString&)> m_pausedHook;
  TrustCheck m_trustCheck;
  QLabel* m_model = nullptr;
  QComboBox* m_weights = nullptr;
  QComboBox* m_tta = nullptr;
  QComboBox* m_filter = nullptr;
  QPushButton* m_save = nullptr;
  QTableWidget* m_table = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_preview = nullptr;
  QLabel* m_camNote = nullptr;
  QSlider* m_opacity = nullptr;
  QStackedWidget* m_pages = nullptr;  // the classes' table and picture, or a detector's boxes
  BoxPredictView* m_boxView = nullptr;
  MaskPredictView* m_maskView = nullptr;
  QWidget* m_opacityRow = nullptr;  // Grad-CAM's opacity: image models only
  QStringList m_lastPaths;          // what was last predicted: again with other weights or TTA
  std::vector<std::pair<QLabel*, QProgressBar*>> m_bars;
  PredictOptions m_used;  // what the rows shown were predicted with
  std::optional<PredictionReport> m_report;
  std::optional<GradCamMap> m_cam;
  std::optional<FeatureAttribution> m_attribution;
  QImage m_shown;
  bool m_busy = false, m_camBusy = false;
  BackgroundJob<Outcome> m_job{this}, m_camJob{this};
};

}  // namespace studio::ui
