#pragma once
// A segmenter's test images in the Evaluation tab (issue 61, item 4): on
// request, the run's segmenter (its test figures' weights) segments its
// test split's images; each image is listed with its own mean IoU, pixel
// accuracy and share of pixels wrong (its confusion matrix against its
// mask, the ignored value left out, as the run's figures are), worst mean
// IoU first; the selected image is drawn twice side by side, its true mask
// and the mask found over it, in a colour per class.
// Thread: the UI thread; the segmenter runs off it (background_job.h).

#include <QImage>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "studio/mask_file.h"
#include "studio/predict.h"
#include "ui/common/background_job.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace studio::ui {

class TestMasksView : public QWidget {
  Q_OBJECT

 public:
  explicit TestMasksView(QWidget* parent = nullptr);
  ~TestMasksView() override;
  // The run whose test images are shown (nothing found until asked).
  void setRun(const QString& runDir);
  // Runs the segmenter on the test images (the button).
  void findMasks();
  bool busy() const { return m_busy; }
  QTableWidget* table() const { return m_images; }  // worst first
  QImage shownImage() const { return m_shown; }
  QString statusText() const;

 Q_SIGNALS:
  void found(int images);

 private:
  struct Found {
    std::optional<PredictionReport> report;  // its masks kept
    std::vector<Mask> truth;                 // per row of the report
    std::vector<double> iou, accuracy;       // per row; NaN where nothing counts
    QString error;
  };
  void fill();
  void showSelected();

  QString m_run;
  QPushButton* m_find = nullptr;
  QLabel* m_status = nullptr;
  QTableWidget* m_images = nullptr;
  QLabel* m_picture = nullptr;
  Found m_found;
  QImage m_shown;
  bool m_busy = false;
  BackgroundJob<Found> m_job{this};
};

}  // namespace studio::ui
