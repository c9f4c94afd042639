#pragma once
// YOLO's segmentation labels (issue 61, item 1): a .txt per image, a line
// per object, "class x1 y1 x2 y2 ..." with the polygon's points normalised
// to the image's width and height (Ultralytics' format). The polygons are
// rasterised as COCO's are (studio/coco_mask.h, pycocotools' rleFrPoly) and
// painted as COCO's instances are (semanticMaskOf: overlaps ignored, 255);
// YOLO's class k is the mask's k + 1, 0 the background.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/box_annotations.h"
#include "studio/mask_file.h"

namespace studio {

struct YoloPolygon {
  int64_t label = 0;       // YOLO's class: 0 .. classes - 1
  std::vector<double> xy;  // pixels: x0, y0, x1, y1, ...
  int64_t line = 0;        // in its label file, for messages
};

// text: the label file's contents. Throws DataError naming path and line:
// a value that is not a number, a class outside 0 .. classes - 1, fewer
// than three points or an odd count of coordinates, a coordinate outside
// 0 to 1.
std::vector<YoloPolygon> readYoloPolygons(const std::string& text, const std::string& path, int64_t height,
                                          int64_t width, int64_t classes);

Mask yoloSemanticMask(const std::vector<YoloPolygon>& polygons, int64_t height, int64_t width);

// task.kind instance_segmentation: a data.yaml's images (readYoloImages)
// with a box and a mask per polygon (BoxAnnotations::masks): the mask
// rasterised as above, the box the polygon's extent (Ultralytics'
// segments2boxes), its area the mask's (as COCO's). Throws DataError naming
// the label file and line, as readYoloPolygons, and a polygon without area.
BoxAnnotations readYoloInstances(const std::string& dataYaml, const std::string& root);

}  // namespace studio
