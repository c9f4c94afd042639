#pragma once
// What a trained segmenter (task.kind segmentation, issue 61) makes of new
// photos, through the one Predictor (studio/predict.h): each image decoded
// at its own size, its shorter side resized to model.segmenter.base_size
// (as the run's evaluations resize), normalised as the run recorded, the
// logits resized back to the image's size (bilinear, as torchvision's
// segmenters resize theirs) and their arg-max written as an index PNG mask
// with VOC's palette (PredictOptions::masksDir, the input's relative path
// and stem). Each row's `top` lists the classes the mask holds, largest
// share first (`probability`: their shares of the pixels).
//
// Inputs: one image file or a folder (its images, in sub-folders too); with
// annotations (a folder of PNG masks with the images' relative paths and
// stems, as data.annotations), the figures of the pixels' confusion matrix
// (studio/segmentation_figures.h) over the images that have a mask, each
// at its own size, the run's data.ignore_index left out.
//
// Torch-free.

#include <string>

namespace studio {

// True when the folder is a run (or export) of task.kind segmentation.
bool isSegmentationRun(const std::string& runOrExport);

}  // namespace studio
