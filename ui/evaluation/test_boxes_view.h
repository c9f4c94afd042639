#pragma once
// A detector's test images in the Evaluation tab: on request, the run's
// detector (its test figures' weights) finds the boxes of its test split's
// images; each image is listed with its true boxes, those found at the score
// slider's threshold, the true boxes missed and the false positives (a
// found box matched to no true box of its class at IoU 0.5, COCO's
// matching: by score, each taking the unmatched true box it overlaps most),
// worst first; the selected image is drawn twice side by side, its true
// boxes and the boxes found, in a colour per class (test_images_view.h).
// Thread: the UI thread; the detector runs off it (background_job.h).

#include <optional>
#include <vector>

#include "studio/box_predict.h"
#include "studio/coco_mask.h"
#include "ui/common/background_job.h"
#include "ui/common/box_drawing.h"
#include "ui/evaluation/test_images_view.h"

class QSlider;

namespace studio::ui {

class TestBoxesView : public TestImagesView {
  Q_OBJECT

 public:
  explicit TestBoxesView(QWidget* parent = nullptr);
  ~TestBoxesView() override;
  // Runs the detector on the test images (the button).
  void findBoxes();
  QSlider* scoreSlider() const { return m_score; }

 private:
  struct Found {
    std::optional<PredictionReport> report;
    std::vector<std::vector<DrawnBox>> truth;  // per row of the report
    // An instance segmentation's true masks, with their labels, per row.
    std::vector<std::vector<std::pair<Rle, int64_t>>> truthMasks;
    std::vector<std::string> classes;
    QString error;
  };
  void forgetFound() override { m_found = Found{}; }
  void fill();
  void showSelected() override;

  QSlider* m_score = nullptr;
  Found m_found;
  BackgroundJob<Found> m_job{this};
};

}  // namespace studio::ui
