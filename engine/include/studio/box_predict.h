#pragma once
// What a trained detector (task.kind detection, issue 43) finds in new
// photos, through the one Predictor (studio/predict.h): each image decoded
// at its own size (shrunk, as its run did, only where its longer side passes
// the detector's max_size), the detector's boxes back in the image's own
// pixels, with the run's score threshold, NMS and detections per image
// (model.detector.*), in each PredictionRow's boxes.
//
// Inputs: one image file or a folder (its images, in sub-folders too, sorted
// by path); or, with annotations (a COCO instances JSON, a YOLO data.yaml or
// a VOC folder, as data.annotations reads them), the annotated images under
// the folder, each prediction carrying its COCO image id, and COCO's figures
// (studio/coco_eval.h) of the detections against the annotations' boxes.
//
// Torch-free.

#include <string>

#include "studio/predict.h"

namespace studio {

// True when the folder is a run (or export) of task.kind detection or
// instance_segmentation (whose boxes carry masks: PredictedBox::mask).
bool isDetectionRun(const std::string& runOrExport);

// COCO's results format: a JSON list of {image_id, category_id, bbox
// [x, y, w, h], score}, with a mask's "segmentation" {size, counts} (RLE);
// image_id is the annotations' id, else the file's
// path as given. Throws IoError naming the file.
void writeCocoResults(const PredictionReport& report, const std::string& path);

// One row per box: source, image_id, class, category_id, score, x, y,
// width, height, error (an image without boxes: one row with no box).
void writeBoxesCsv(const PredictionReport& report, const std::string& path);

}  // namespace studio
