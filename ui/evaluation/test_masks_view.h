#pragma once
// A segmenter's test images in the Evaluation tab (issue 61, item 4): on
// request, the run's segmenter (its test figures' weights) segments its
// test split's images; each image is listed with its own mean IoU, pixel
// accuracy and share of pixels wrong (its confusion matrix against its
// mask, the ignored value left out, as the run's figures are), worst mean
// IoU first; the selected image is drawn twice side by side, its true mask
// and the mask found over it, in a colour per class (test_images_view.h).
// Thread: the UI thread; the segmenter runs off it (background_job.h).

#include <optional>
#include <vector>

#include "studio/mask_file.h"
#include "studio/predict.h"
#include "ui/common/background_job.h"
#include "ui/evaluation/test_images_view.h"

namespace studio::ui {

class TestMasksView : public TestImagesView {
  Q_OBJECT

 public:
  explicit TestMasksView(QWidget* parent = nullptr);
  ~TestMasksView() override;
  // Runs the segmenter on the test images (the button).
  void findMasks();

 private:
  struct Found {
    std::optional<PredictionReport> report;  // its masks kept
    std::vector<Mask> truth;                 // per row of the report
    std::vector<double> iou, accuracy;       // per row; NaN where nothing counts
    QString error;
  };
  void forgetFound() override { m_found = Found{}; }
  void fill();
  void showSelected() override;

  Found m_found;
  BackgroundJob<Found> m_job{this};
};

}  // namespace studio::ui
