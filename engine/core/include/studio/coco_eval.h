#pragma once
// COCO's detection figures (the bbox evaluation of pycocotools' COCOeval,
// Lin et al., "Microsoft COCO: Common Objects in Context", ECCV 2014, and
// cocodataset/cocoapi PythonAPI/pycocotools/cocoeval.py), computed as
// pycocotools computes them:
//  - per image and category, detections by score (a stable sort, ties in the
//    order given), at most maxDets[-1] (100) of them; IoU of boxes
//    [x, y, w, h], and for a crowd box the intersection over the detection's
//    area;
//  - matching at each IoU threshold 0.50:0.05:0.95: each detection, best
//    score first, takes the unmatched ground truth of highest IoU (a crowd
//    box may take several); a ground truth outside the area range, or a crowd,
//    is ignored (a detection matched to it, or unmatched and outside the
//    range, does not count);
//  - per category, area range and maxDets: the detections of all images by
//    score, precision made monotone, read at 101 recall thresholds 0:0.01:1;
//    AP is the mean over IoU thresholds, categories and recall thresholds of
//    those that exist; AR the mean of the recalls reached.
// Areas: a ground truth's is its annotation's (COCO's "area", the
// segmentation's), a detection's is its box's (segm: its mask's, as
// pycocotools' loadRes sets it).
// iouType segm (COCOeval(..., "segm"), issue 61 item 4): the IoUs are the
// masks' (pycocotools' maskUtils.iou: for a crowd, over the detection's
// area), everything else as for boxes. Categories evaluated: those
// of the ground truth, sorted by id; images: those given. pycocotools keeps
// matches by annotation id, so a ground truth of id 0 never counts as matched
// there; here matches are flags (equal for COCO's ids, which start at 1).
// Torch-free. Thread: free functions, any thread.

#include <array>
#include <cstdint>
#include <vector>

#include "studio/coco_mask.h"

namespace studio {

struct CocoBox {
  int64_t image = 0;            // image id
  int64_t category = 0;         // category id
  std::array<double, 4> box{};  // x, y, width, height, in pixels
  double area = 0;              // ground truth: the annotation's area (detections': their box's, always)
  double score = 0;             // detections only
  bool crowd = false;           // ground truth only (iscrowd)
  const Rle* mask = nullptr;    // segm: the instance's mask (the caller keeps it)
};

enum class CocoIouType { bbox, segm };

struct CocoStats {
  // COCOeval.stats, in its order: AP@[.50:.95], AP50, AP75, AP small,
  // medium, large; AR@1, AR@10, AR@100, AR small, medium, large (maxDets
  // 100 where not named). -1 where nothing was there to measure.
  std::array<double, 12> stats{};
  std::vector<int64_t> categories;  // the ground truth's category ids, sorted
  // Per category: AP@[.50:.95] at area all and 100 detections (-1: none
  // of that category in the ground truth), and its precision at each of the
  // 101 recall thresholds at IoU 0.50 and 0.75 (the precision-recall curves).
  std::vector<double> apPerCategory;
  std::vector<std::vector<double>> precision50, precision75;
};

// imageIds: every image of the ground truth (those without boxes too).
// segm: std::invalid_argument when a box of an image evaluated has no mask.
CocoStats cocoEvaluate(const std::vector<int64_t>& imageIds, const std::vector<CocoBox>& groundTruth,
                       const std::vector<CocoBox>& detections, CocoIouType iouType = CocoIouType::bbox);

// iouType segm of detections whose masks are masks[k] (one per detection,
// in order; the caller keeps them): std::invalid_argument when the counts
// differ. A detection's area is then its mask's, as cocoEvaluate takes it.
CocoStats cocoEvaluateMasks(const std::vector<int64_t>& imageIds, const std::vector<CocoBox>& groundTruth,
                            std::vector<CocoBox> detections, const std::vector<Rle>& masks);
struct BoxAnnotations;

// The annotations' boxes as cocoEvaluate's ground truth, with the file's
// category ids. CocoBox::image is the image's index into a.images when
// byIndex (a run's items), else its id (COCO's); only the images `keep` marks
// when it is not empty (one flag per image). Read with masks
// (BoxAnnotations::masks), each box's mask too (the annotations keep it).
std::vector<CocoBox> cocoGroundTruth(const BoxAnnotations& a, bool byIndex, const std::vector<char>& keep = {});

// Each of categoryIds' AP@[.50:.95] (NaN where the ground truth has none of
// it) and its precision-recall curve at IoU 0.50 (empty then): a run's
// classes in their order, from the stats of cocoEvaluate.
struct CocoPerClass {
  std::vector<double> ap;
  std::vector<std::vector<double>> precision50;
};
CocoPerClass cocoPerClass(const CocoStats& stats, const std::vector<int64_t>& categoryIds);

// IoU of a detection with a ground-truth box (pycocotools' bbIou).
double cocoIou(const std::array<double, 4>& detection, const std::array<double, 4>& truth, bool crowd);

}  // namespace studio
