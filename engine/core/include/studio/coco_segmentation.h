#pragma once
// COCO's instance segmentations (an annotation's "segmentation", as CVAT,
// Label Studio and Roboflow export them) for issue 61, item 1:
//  - polygons ([[x0, y0, x1, y1, ...], ...], merged into one mask as
//    pycocotools' frPyObjects and merge make them), or an RLE ({"size":
//    [h, w], "counts": COCO's compact text or a list of runs});
//  - an image's instances as one semantic mask, as torchvision's
//    references/segmentation/coco_utils.py's ConvertCocoPolysToMask: each
//    pixel its instance's class, 0 where none, and 255 (ignored) where two
//    instances overlap.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "studio/coco_mask.h"
#include "studio/mask_file.h"

namespace studio {

// The mask of one segmentation in an image of height x width. Throws
// DataError starting with `where` (the file and annotation) and saying what
// is wrong: a polygon of fewer than three points, with a value that is
// not a number or a point more than the image's width or height past its
// edges, an RLE whose size is not the image's or whose counts do not
// decode to it, anything else.
Rle cocoSegmentation(const nlohmann::json& segmentation, int64_t height, int64_t width, const std::string& where);

// The semantic mask of an image's instances: (mask, class) pairs, classes
// 1..254 (0 is the background).
Mask semanticMaskOf(const std::vector<std::pair<Rle, uint8_t>>& instances, int64_t height, int64_t width);

}  // namespace studio
