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

#include "studio/mask_file.h"

namespace studio {

struct YoloPolygon {
  int64_t label = 0;       // YOLO's class: 0 .. classes - 1
  std::vector<double> xy;  // pixels: x0, y0, x1, y1, ...
};

// text: the label file's contents. Throws DataError naming path and line:
// a value that is not a number, a class outside 0 .. classes - 1, fewer
// than three points or an odd count of coordinates, a coordinate outside
// 0 to 1.
std::vector<YoloPolygon> readYoloPolygons(const std::string& text, const std::string& path, int64_t height,
                                          int64_t width, int64_t classes);

Mask yoloSemanticMask(const std::vector<YoloPolygon>& polygons, int64_t height, int64_t width);

}  // namespace studio
