#pragma once
// A segmentation mask drawn over its image, as the Data tab's samples (and
// the Predict and Evaluation tabs to come) show a segmenter's data and
// answers: each pixel of a class blended with the class's colour (the hue
// per class of ui/common/box_drawing.h) at `opacity`, the background (class
// 0) and the ignored value left as they are, scaled to fit a square of
// `size` pixels (0: the image's own size).
// Thread: any (QImage on its own).

#include <QImage>

#include <cstdint>

#include "studio/coco_mask.h"
#include "studio/mask_file.h"
#include "studio/predict.h"

namespace studio::ui {

// The mask's size must be the image's (both as the files hold them).
QImage overlayMask(const QImage& image, const Mask& mask, size_t classes, double opacity, int size);

// An instance segmentation's masks (each of its box's label, 0 ..
// classes - 1, in that class's colour, as drawBoxes draws its box) over
// their image, at its own size; a mask of another size is left out.
QImage overlayInstances(const QImage& image, const std::vector<std::pair<const Rle*, int64_t>>& masks, size_t classes,
                        double opacity);
// A detector's found masks (PredictedBox::mask) of the boxes scored at
// least minScore, over the image (as overlayInstances).
QImage overlayFoundMasks(const QImage& image, const std::vector<PredictedBox>& boxes, double minScore, size_t classes,
                         double opacity);

}  // namespace studio::ui
