#pragma once
// The Predict tab's view of a segmenter (task.kind segmentation): the
// images dropped on the tab, one row each with the classes its mask holds
// and their shares of the pixels; the selected image drawn with its mask
// over it (ui/common/mask_drawing.h) at the opacity slider's; Save… writes
// each mask as an index PNG into a folder, as training-studio-cli predict
// does. Predicting runs off the UI thread with the run's Predictor, kept
// loaded between jobs.
// Thread: the UI thread.

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>

#include "studio/predict.h"
#include "ui/common/background_job.h"

class QLabel;
class QSlider;
class QTableWidget;

namespace studio::ui {
struct HeldPredictor;
}

namespace studio::ui {

class MaskPredictView : public QWidget {
  Q_OBJECT

 public:
  explicit MaskPredictView(QWidget* parent = nullptr);
  ~MaskPredictView() override;

  // The run's (or export's) segmenter on image files and folders; replaces the rows.
  void predict(const QString& folder, const PredictOptions& options, const QStringList& paths, bool reload);
  bool busy() const { return m_busy; }
  const std::optional<PredictionReport>& report() const { return m_report; }
  QTableWidget* table() const { return m_images; }      // one row per image, in the report's order
  QSlider* opacitySlider() const { return m_opacity; }  // the mask's opacity, in percent
  QImage shownImage() const { return m_shown; }
  // Each mask as an index PNG (VOC's palette) named as its image, into folder. false with why.
  bool save(const QString& folder, QString* error = nullptr) const;
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

  std::shared_ptr<HeldPredictor> m_held;
  QTableWidget* m_images = nullptr;
  QLabel* m_picture = nullptr;
  QSlider* m_opacity = nullptr;
  std::optional<PredictionReport> m_report;
  QImage m_shown;
  QString m_statusText;
  bool m_busy = false;
  BackgroundJob<Outcome> m_job{this};
};

}  // namespace studio::ui
