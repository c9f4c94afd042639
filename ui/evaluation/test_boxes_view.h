#pragma once
// A detector's test images in the Evaluation tab: on request, the run's
// detector (its test figures' weights) finds the boxes of its test split's
// images; each image is listed with its true boxes, those found at the score
// slider's threshold, the true boxes missed and the false positives (a
// found box matched to no true box of its class at IoU 0.5, COCO's
// matching: by score, each taking the unmatched true box it overlaps most),
// worst first; the selected image is drawn twice side by side, its true
// boxes and the boxes found, in a colour per class.
// Thread: the UI thread; the detector runs off it (background_job.h).

#include <QImage>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "studio/box_predict.h"
#include "ui/common/background_job.h"
#include "ui/common/box_drawing.h"

class QLabel;
class QPushButton;
class QSlider;
class QTableWidget;

namespace studio::ui {

class TestBoxesView : public QWidget {
  Q_OBJECT

 public:
  explicit TestBoxesView(QWidget* parent = nullptr);
  ~TestBoxesView() override;
  // The run whose test images are shown (nothing found until asked).
  void setRun(const QString& runDir);
  // Runs the detector on the test images (the button).
  void findBoxes();
  bool busy() const { return m_busy; }
  QTableWidget* table() const { return m_images; }  // worst first
  QSlider* scoreSlider() const { return m_score; }
  QImage shownImage() const { return m_shown; }
  QString statusText() const;

 Q_SIGNALS:
  void found(int images);

 private:
  struct Found {
    std::optional<PredictionReport> report;
    std::vector<std::vector<DrawnBox>> truth;  // per row of the report
    std::vector<std::string> classes;
    QString error;
  };
  void fill();
  void showSelected();

  QString m_run;
  QPushButton* m_find = nullptr;
  QLabel* m_status = nullptr;
  QSlider* m_score = nullptr;
  QTableWidget* m_images = nullptr;
  QLabel* m_picture = nullptr;
  Found m_found;
  QImage m_shown;
  bool m_busy = false;
  BackgroundJob<Found> m_job{this};
};

}  // namespace studio::ui
