// COCO's detection figures (studio/coco_eval.h) equal pycocotools' COCOeval
// on the same ground truth and detections: the twelve summary figures, each
// category's AP and its precision at the 101 recall thresholds (IoU 0.50 and
// 0.75), within 1e-9. The fixture (tests/reference/coco_reference.py) has
// crowds, images without boxes, boxes of every size range, annotation areas
// that are not their boxes', tied scores, 130 detections in one image and a
// category the ground truth lacks.
// With iouType segm the same for masks (coco_segm_eval.json).
// Oracle: pycocotools, run by tests/reference/make_references.py.
#include "test_support.h"

#include <deque>

#include "studio/coco_eval.h"
#include "studio/coco_segmentation.h"

using namespace studio;

namespace {

std::vector<CocoBox> boxes(const nlohmann::json& list, bool detections) {
  std::vector<CocoBox> out;
  for (const auto& a : list) {
    CocoBox b;
    b.image = a["image_id"].get<int64_t>();
    b.category = a["category_id"].get<int64_t>();
    if (a.contains("bbox"))  // a segm result has only its mask
      for (size_t i = 0; i < 4; ++i) b.box[i] = a["bbox"][i].get<double>();
    if (detections) {
      b.score = a["score"].get<double>();
    } else {
      b.area = a["area"].get<double>();
      b.crowd = a.value("iscrowd", 0) != 0;
    }
    out.push_back(b);
  }
  return out;
}

// segm: each entry's mask, read as a COCO file's segmentation (polygons, RLE
// or its compact counts), kept in `masks` for the boxes that point to them.
void attachMasks(std::vector<CocoBox>& out, const nlohmann::json& list, const nlohmann::json& gt,
                 std::deque<Rle>& masks) {
  std::map<int64_t, std::pair<int64_t, int64_t>> size;
  for (const auto& im : gt["images"]) size[im["id"].get<int64_t>()] = {im["height"], im["width"]};
  for (size_t i = 0; i < out.size(); ++i) {
    const auto [h, w] = size.at(out[i].image);
    masks.push_back(cocoSegmentation(list[i]["segmentation"], h, w, "entry " + std::to_string(i)));
    out[i].mask = &masks.back();
  }
}

void compareWith(const nlohmann::json& gt, const nlohmann::json& detections, const nlohmann::json& want,
                 CocoIouType type = CocoIouType::bbox) {
  std::vector<int64_t> images;
  for (const auto& im : gt["images"]) images.push_back(im["id"].get<int64_t>());
  std::vector<CocoBox> truth = boxes(gt["annotations"], false), found = boxes(detections, true);
  std::deque<Rle> masks;
  if (type == CocoIouType::segm) {
    attachMasks(truth, gt["annotations"], gt, masks);
    attachMasks(found, detections, gt, masks);
  }
  const CocoStats got = cocoEvaluate(images, truth, found, type);
  static const char* names[] = {"AP",   "AP50",  "AP75",   "AP small", "AP medium", "AP large",
                                "AR@1", "AR@10", "AR@100", "AR small", "AR medium", "AR large"};
  for (size_t i = 0; i < 12; ++i) {
    const double w = want["stats"][i].get<double>();
    QVERIFY2(
        std::abs(got.stats[i] - w) < 1e-9,
        qPrintable(QString("%1: %2, pycocotools %3").arg(names[i]).arg(got.stats[i], 0, 'g', 17).arg(w, 0, 'g', 17)));
  }
  QCOMPARE(got.categories, want["categories"].get<std::vector<int64_t>>());
  for (size_t k = 0; k < got.categories.size(); ++k) {
    QVERIFY2(std::abs(got.apPerCategory[k] - want["ap_per_category"][k].get<double>()) < 1e-9,
             qPrintable(QString("AP of category %1").arg(got.categories[k])));
    for (size_t r = 0; r < 101; ++r) {
      QVERIFY2(std::abs(got.precision50[k][r] - want["precision50"][k][r].get<double>()) < 1e-9,
               qPrintable(QString("category %1, recall %2: precision at IoU .50").arg(got.categories[k]).arg(r)));
      QVERIFY2(std::abs(got.precision75[k][r] - want["precision75"][k][r].get<double>()) < 1e-9,
               qPrintable(QString("category %1, recall %2: precision at IoU .75").arg(got.categories[k]).arg(r)));
    }
  }
}

}  // namespace

class TestCocoEval : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void equalsPycocotools() {
    const auto ref = test::loadReference("coco_eval");
    QVERIFY(ref["detections"].size() > 200);
    compareWith(ref["ground_truth"], ref["detections"], ref);
  }

  // iouType segm: the masks' IoUs (polygons, crowds' RLE, detections' compact RLE), a detection's
  // area its mask's; the figures pycocotools' COCOeval(..., "segm") gives.
  void masksAsPycocotoolsSegm() {
    const auto ref = test::loadReference("coco_segm_eval");
    QVERIFY(ref["detections"].size() > 200);
    compareWith(ref["ground_truth"], ref["detections"], ref, CocoIouType::segm);
    // Without its masks a segm evaluation says so.
    std::vector<CocoBox> truth{CocoBox{1, 1, {0, 0, 4, 4}, 16, 0, false, nullptr}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cocoEvaluate({1}, truth, truth, CocoIouType::segm));
  }

  void exactDetectionsAsPycocotools() {
    const auto ref = test::loadReference("coco_eval");
    compareWith(ref["ground_truth"], ref["exact"]["detections"], ref["exact"]);
  }

  // bbIou: intersection over union; for a crowd, over the detection's area.
  void iouOfBoxes() {
    QCOMPARE(cocoIou({0, 0, 10, 10}, {5, 0, 10, 10}, false), 50.0 / 150.0);
    QCOMPARE(cocoIou({0, 0, 10, 10}, {5, 0, 10, 10}, true), 0.5);
    QCOMPARE(cocoIou({0, 0, 10, 10}, {10, 0, 10, 10}, false), 0.0);  // touching is no overlap
  }

  // No ground truth at all: every figure is -1 (COCOeval.summarize's value
  // when nothing was measured).
  void nothingToMeasure() {
    const CocoStats s = cocoEvaluate({1, 2}, {}, {{1, 1, {0, 0, 5, 5}, 0, 0.9, false}});
    for (double v : s.stats) QCOMPARE(v, -1.0);
    QVERIFY(s.categories.empty());
  }
};

QTEST_GUILESS_MAIN(TestCocoEval)
#include "test_coco_eval.moc"
