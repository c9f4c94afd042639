#pragma once
// COCO's masks as run-length encodings (RLE), as pycocotools' mask API
// (its maskApi.c) makes and measures them, so that the studio's instance
// masks, COCO files' segmentations and the segm evaluation agree with
// pycocotools': runs over the pixels in column-major order (down each
// column, then the next), starting with a run of zeros; polygons
// rasterised as its rleFrPoly does (edges traced at 5x, then sampled at
// pixel centres); the compact string form of COCO's JSON ("counts" as
// text). Written from pycocotools' algorithms; the tests hold it to
// pycocotools itself.
// Torch-free. Thread: free functions, any thread.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace studio {

struct Rle {
  int64_t height = 0, width = 0;
  std::vector<uint32_t> counts;  // alternating runs of 0 and 1, from a run of 0 (maybe empty)
};

// mask: height x width, row-major, nonzero = inside.
Rle rleEncode(const uint8_t* mask, int64_t height, int64_t width);
std::vector<uint8_t> rleDecode(const Rle& rle);  // row-major, 0 or 1
// xy: x0, y0, x1, y1, ... (at least 3 points), in pixels.
Rle rleFromPolygon(const std::vector<double>& xy, int64_t height, int64_t width);
// A box [x, y, w, h] as the polygon of its corners (pycocotools' frBbox).
Rle rleFromBox(const std::array<double, 4>& box, int64_t height, int64_t width);
// Union (or intersection) of masks of one size; empty when there is none.
Rle rleMerge(const std::vector<Rle>& rles, bool intersect = false);
uint64_t rleArea(const Rle& rle);
std::array<double, 4> rleBox(const Rle& rle);  // [x, y, w, h] of the pixels inside; zeros when none
// pycocotools' iou: intersection over union, or over the detection's area
// when the ground truth is a crowd; 0 without intersection, -1 for masks
// of different sizes.
double rleIou(const Rle& detection, const Rle& truth, bool crowd);

// COCO's compact "counts" text, and back (throws std::invalid_argument
// naming what is wrong when the text does not decode to height x width).
std::string rleToString(const Rle& rle);
Rle rleFromString(const std::string& text, int64_t height, int64_t width);

}  // namespace studio
