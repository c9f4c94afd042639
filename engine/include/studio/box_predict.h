#pragma once
// What a trained detector (task.kind detection, issue 43) finds in new
// photos: each image decoded at its own size (shrunk, as its run did, only
// where its longer side passes the detector's max_size), the detector's
// boxes back in the image's own pixels, with the run's score threshold,
// NMS and detections per image (model.detector.*).
//
// Inputs: one image file or a folder (its images, in sub-folders too, sorted
// by path); or, with annotations (a COCO instances JSON, a YOLO data.yaml or
// a VOC folder, as data.annotations reads them), the annotated images under
// the folder, each prediction carrying its COCO image id, and COCO's figures
// (studio/coco_eval.h) of the detections against the annotations' boxes.
//
// Torch-free. Thread: a BoxPredictor is used by one thread at a time; the
// window runs it off the UI thread.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "studio/predict.h"  // PredictOptions, PredictProgress

namespace studio {

struct PredictedBox {
  double x = 0, y = 0, width = 0, height = 0;  // pixels of the image as stored, COCO's [x, y, w, h]
  double score = 0;
  int64_t label = 0;  // into BoxPredictionReport::classes
};

struct BoxPredictionRow {
  std::string source;    // the file
  std::string name;      // its path under the input folder (a single file: its name)
  int64_t imageId = -1;  // the annotations' image id; -1 without annotations
  int64_t width = 0, height = 0;
  std::vector<PredictedBox> boxes;  // by score, highest first
  std::string error;                // why it was skipped ("" when predicted)
};

struct BoxPredictionReport {
  std::string model, weights, note, device;
  std::vector<std::string> classes;
  std::vector<int64_t> categoryIds;  // the annotations' id of each class (COCO's category_id)
  std::vector<BoxPredictionRow> rows;
  int64_t skipped = 0, boxes = 0;
  double seconds = 0;
  // With annotations: COCO's twelve figures (CocoStats::stats' order) and
  // each class's AP@[.50:.95] (NaN: no box of it in the annotations).
  bool evaluated = false;
  std::array<double, 12> coco{};
  std::vector<double> apPerClass;
  int64_t truthBoxes = 0;
};

class BoxPredictor {
 public:
  // A detection run's folder or its export. Throws InputError naming the
  // folder: not a detection run, no checkpoint, an edited export; options as Predictor reads them (which,
  // batchSize, workers, skipBad, device; topK and tta do not apply).
  BoxPredictor(const std::string& runDir, const PredictOptions& options = {});
  ~BoxPredictor();
  BoxPredictor(const BoxPredictor&) = delete;
  BoxPredictor& operator=(const BoxPredictor&) = delete;

  const std::vector<std::string>& classes() const;
  std::string description() const;

  // annotations "": input is a file or folder, every image predicted.
  // Throws DataError naming a file that cannot be read (unless skipBad),
  // an annotations file that cannot be read, or an annotated image missing.
  BoxPredictionReport predict(const std::string& input, const std::string& annotations = "",
                              const PredictProgress& progress = {});
  BoxPredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

// True when the folder is a run (or export) of task.kind detection.
bool isDetectionRun(const std::string& runOrExport);

// COCO's results format: a JSON list of {image_id, category_id, bbox
// [x, y, w, h], score}; image_id is the annotations' id, else the file's
// path as given. Throws IoError naming the file.
void writeCocoResults(const BoxPredictionReport& report, const std::string& path);
// One row per box: source, image_id, class, category_id, score, x, y,
// width, height, error (an image without boxes: one row with no box).
void writeBoxesCsv(const BoxPredictionReport& report, const std::string& path);

}  // namespace studio
