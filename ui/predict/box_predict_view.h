#pragma once
// The Predict tab's view of a detector (task.kind detection): the images
// dropped on the tab, one row each with the boxes found at the slider's
// score, its best score and the classes it holds; the selected image drawn
// with its boxes (a colour per class, each labelled with its class and
// score; an instance segmentation's masks under them at the opacity
// slider's) and the list of them. The score slider hides the boxes below it,
// in the picture, the list and the counts. Save… writes COCO's results
// JSON or a CSV of boxes, as training-studio-cli predict does. Predicting
// runs off the UI thread (background_job.h) with the run's Predictor,
// kept loaded between jobs.
// Thread: the UI thread.

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>

#include "studio/box_predict.h"
#include "ui/common/background_job.h"

class QLabel;
class QSlider;
class QTableWidget;

namespace studio::ui {
struct HeldPredictor;
}

namespace studio::ui {

class BoxPredictView : public QWidget {
  Q_OBJECT

 public:
  explicit BoxPredictView(QWidget* parent = nullptr);
  ~BoxPredictView() override;

  // The run's (or export's) detector on image files and folders; replaces
  // the rows. reload: load the model again (a paused run's new checkpoint).
  void predict(const QString& folder, const PredictOptions& options, const QStringList& paths, bool reload);
  bool busy() const { return m_busy; }
  const std::optional<PredictionReport>& report() const { return m_report; }
  QTableWidget* table() const { return m_images; }   // one row per image
  QTableWidget* boxList() const { return m_boxes; }  // the selected image's boxes at the slider's score
  QSlider* scoreSlider() const { return m_score; }   // the lowest score shown, in hundredths
  // An instance segmentation's masks' opacity, in hundredths (shown only when the boxes carry masks).
  QSlider* opacitySlider() const { return m_opacity; }
  double minimumScore() const;
  QImage shownImage() const { return m_shown; }
  // .json: COCO's results; .csv: a row per box. false with why.
  bool save(const QString& path, QString* error = nullptr) const;
  QString statusText() const { return m_statusText; }
  // Save… : asks where, then save(); a failure is a message.
  void saveChosen();

 Q_SIGNALS:
  void predicted(int images);
  void message(const QString& text, bool error);

 private:
  struct Outcome {
    std::optional<PredictionReport> report;
    QString error;
  };
  void fillImages();
  void showSelected();
  int selectedRow() const;  // into the report's rows; -1 none

  std::shared_ptr<HeldPredictor> m_held;
  QTableWidget* m_images = nullptr;
  QTableWidget* m_boxes = nullptr;
  QLabel* m_picture = nullptr;
  QLabel* m_scoreText = nullptr;
  QSlider* m_score = nullptr;
  QSlider* m_opacity = nullptr;
  QWidget* m_opacityRow = nullptr;
  std::optional<PredictionReport> m_report;
  QImage m_shown;
  QString m_statusText;
  bool m_busy = false;
  BackgroundJob<Outcome> m_job{this};
};

}  // namespace studio::ui
