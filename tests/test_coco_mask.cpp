// COCO's masks as RLE (studio/coco_mask.h) equal pycocotools' mask API on
// the same inputs (issue 61, item 4: RLE encoding, decoding, area and IoU
// the project's own): the counts text of seeded masks of four sizes, an
// empty and a full one, one whose run crosses columns; their decoding,
// area and box; polygons (concave, crossing themselves, past the image's
// edges, on half-pixel coordinates, a repeated vertex) rasterised pixel for
// pixel as rleFrPoly does, objects of several polygons merged, boxes as
// frBbox; IoU with a crowd among the truths; and counts
// text that does not fit its size refused with why; COCO annotations'
// segmentations (polygons, RLE text, RLE runs) as one semantic mask equal to
// torchvision's references/segmentation ConvertCocoPolysToMask (overlaps at
// 255), and bad segmentations named.
// Oracle: pycocotools, run by tests/reference/make_references.py
// (coco_mask_reference.py).
#include "test_support.h"

#include "studio/coco_mask.h"
#include "studio/coco_segmentation.h"
#include "studio/errors.h"
#include "studio/yolo_masks.h"

using namespace studio;

namespace {

std::vector<uint8_t> bits(const nlohmann::json& list) { return list.get<std::vector<uint8_t>>(); }

void sameFacts(const Rle& r, const nlohmann::json& want, const QString& what) {
  QVERIFY2(rleToString(r) == want["counts"].get<std::string>(),
           qPrintable(what + ": " + QString::fromStdString(rleToString(r)) + " against " +
                      QString::fromStdString(want["counts"].get<std::string>())));
  QCOMPARE(rleArea(r), want["area"].get<uint64_t>());
  const auto box = rleBox(r);
  for (size_t i = 0; i < 4; ++i) QCOMPARE(box[i], want["box"][i].get<double>());
}

}  // namespace

class TestCocoMask : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void masksEncodeAsPycocotools() {
    const auto ref = test::loadReference("coco_mask")["masks"];
    QCOMPARE(ref.size(), size_t(27));
    int i = 0;
    for (const auto& m : ref) {
      const int64_t h = m["height"], w = m["width"];
      const auto mask = bits(m["bits"]);
      const Rle r = rleEncode(mask.data(), h, w);
      sameFacts(r, m, QString("mask %1").arg(i));
      QCOMPARE(rleDecode(r), mask);
      const Rle back = rleFromString(m["counts"].get<std::string>(), h, w);  // and from COCO's text
      QCOMPARE(back.counts, r.counts);
      ++i;
    }
  }

  void polygonsRasteriseAsPycocotools() {
    const auto ref = test::loadReference("coco_mask")["polygons"];
    QCOMPARE(ref.size(), size_t(69));
    int i = 0;
    for (const auto& p : ref) {
      const int64_t h = p["height"], w = p["width"];
      std::vector<Rle> parts;
      for (const auto& poly : p["polygons"]) parts.push_back(rleFromPolygon(poly.get<std::vector<double>>(), h, w));
      const Rle r = rleMerge(parts);
      sameFacts(r, p, QString("polygon %1").arg(i));
      QCOMPARE(rleDecode(r), bits(p["bits"]));
      ++i;
    }
  }

  void boxesAsPycocotoolsFrBbox() {
    for (const auto& b : test::loadReference("coco_mask")["boxes"]) {
      const auto in = b["box_in"].get<std::vector<double>>();
      sameFacts(rleFromBox({in[0], in[1], in[2], in[3]}, b["height"], b["width"]), b, "box");
    }
  }

  void iouIsPycocotoolsWithACrowd() {
    const auto ref = test::loadReference("coco_mask")["iou"];
    const int64_t h = ref["height"], w = ref["width"];
    const auto crowd = ref["crowd"].get<std::vector<int>>();
    for (size_t d = 0; d < ref["detections"].size(); ++d)
      for (size_t g = 0; g < ref["truths"].size(); ++g) {
        const double got =
            rleIou(rleFromString(ref["detections"][d], h, w), rleFromString(ref["truths"][g], h, w), crowd[g] != 0);
        QVERIFY2(
            std::fabs(got - ref["values"][d][g].get<double>()) <= 1e-15,
            qPrintable(
                QString("dt %1, gt %2: %3 against %4").arg(d).arg(g).arg(got).arg(ref["values"][d][g].get<double>())));
      }
    // Masks of different sizes: -1, as pycocotools.
    const Rle a = rleFromBox({0, 0, 3, 3}, 5, 5), b = rleFromBox({0, 0, 3, 3}, 5, 6);
    QCOMPARE(rleIou(a, b, false), -1.0);
    QCOMPARE(rleIou(a, a, false), 1.0);
  }

  void annotationsMakeTheReferencesSemanticMask() {
    const auto ref = test::loadReference("coco_mask");
    QCOMPARE(ref["semantic"].size(), size_t(6));
    for (const auto& image : ref["semantic"]) {
      const int64_t h = image["height"], w = image["width"];
      std::vector<std::pair<Rle, uint8_t>> instances;
      for (const auto& a : image["annotations"])
        instances.emplace_back(cocoSegmentation(a["segmentation"], h, w, "test.json annotation"),
                               a["category_id"].get<uint8_t>());
      const Mask m = semanticMaskOf(instances, h, w);
      QCOMPARE(m.values, bits(image["target"]));
    }
    const auto& t = ref["rle_text"];
    const nlohmann::json compact = {{"size", {t["height"], t["width"]}}, {"counts", t["counts"]}};
    QCOMPARE(rleDecode(cocoSegmentation(compact, t["height"], t["width"], "x")), bits(t["bits"]));
  }

  void yoloLabelsMakeTheReferencesSemanticMask() {
    const auto ref = test::loadReference("coco_mask")["yolo"];
    QCOMPARE(ref.size(), size_t(4));
    for (const auto& image : ref) {
      const int64_t h = image["height"], w = image["width"];
      const auto polygons = readYoloPolygons(image["text"], "labels/a.txt", h, w, 5);
      QCOMPARE(yoloSemanticMask(polygons, h, w).values, bits(image["target"]));
    }
    auto why = [](const std::string& text) {
      try {
        readYoloPolygons(text, "labels/a.txt", 10, 20, 3);
      } catch (const DataError& e) {
        return QString(e.what());
      }
      return QString("(no error)");
    };
    QCOMPARE(why("0 0.1 0.1 0.5 0.1 0.5 0.5\n\n"), QString("(no error)"));
    QCOMPARE(why("\n0 0.1 0.1 0.5 0.1\n"),
             QString("labels/a.txt line 2: a polygon needs at least three points (x y pairs); it has 4 numbers after "
                     "its class (\"class cx cy w h\" is a box, detection's label)"));
    QVERIFY(why("0 0.1 0.1 0.5 0.1 0.5 0.5 0.7\n").contains("it has 7 numbers"));
    QCOMPARE(why("3 0.1 0.1 0.5 0.1 0.5 0.5\n"),
             QString("labels/a.txt line 1: class 3, but there are 3 classes (0 to 2)"));
    QVERIFY(why("1.5 0.1 0.1 0.5 0.1 0.5 0.5\n").contains("class 1.5"));
    QVERIFY(why("0 0.1 x 0.5 0.1 0.5 0.5\n").contains("line 1: \"x\" is not a number"));
    QVERIFY(why("0 0.1 nan 0.5 0.1 0.5 0.5\n").contains("line 1: \"nan\" is not a number"));
    QVERIFY(why("inf 0.1 0.1 0.5 0.1 0.5 0.5\n").contains("line 1: \"inf\" is not a number"));
    QVERIFY(why("0 0.1 1.2 0.5 0.1 0.5 0.5\n").contains("1.2 is outside 0 to 1"));
  }

  void badSegmentationsAreNamed() {
    auto why = [](const nlohmann::json& s) {
      try {
        cocoSegmentation(s, 4, 5, "a.json annotation 7");
      } catch (const DataError& e) {
        return QString(e.what());
      }
      return QString("(no error)");
    };
    QCOMPARE(why(nlohmann::json::parse("[[0, 0, 3, 0, 3, 3]]")), QString("(no error)"));
    QVERIFY2(why(nlohmann::json::parse("[[0, 0, 3, 0]]"))
                 .startsWith("a.json annotation 7: its segmentation's polygon 1 has 4 numbers: a polygon needs at "
                             "least three points"),
             qPrintable(why(nlohmann::json::parse("[[0, 0, 3, 0]]"))));
    QVERIFY(why(nlohmann::json::parse("[[0, 0, 3, \"a\", 1, 1]]")).contains("holds \"a\", not a number"));
    QVERIFY(why(nlohmann::json::parse("[]")).contains("has no polygon"));
    QVERIFY2(
        why(nlohmann::json::parse("[[0, 0, 3, 0, 3, 1e300]]")).contains("has the y 1e+300, far outside its 4x5 image"),
        qPrintable(why(nlohmann::json::parse("[[0, 0, 3, 0, 3, 1e300]]"))));
    QVERIFY2(why(nlohmann::json::parse(R"({"size": [5, 4], "counts": [20]})"))
                 .contains("its RLE is 5x4 but its image is 4x5 (height x width)"),
             qPrintable(why(nlohmann::json::parse(R"({"size": [5, 4], "counts": [20]})"))));
    QVERIFY(why(nlohmann::json::parse(R"({"size": [4, 5], "counts": [3, 4]})")).contains("cover 7 pixels, not the 20"));
    QVERIFY(why(nlohmann::json::parse(R"({"size": [4, 5], "counts": [3, -4]})")).contains("not a run of pixels"));
    QVERIFY(why(nlohmann::json::parse(R"({"size": [4, 5], "counts": "0c"})"))
                .startsWith("a.json annotation 7: its RLE counts"));
    QVERIFY(why(nlohmann::json::parse(R"({"counts": "0c"})")).contains("neither polygons nor an RLE"));
  }

  void countsThatDoNotFitAreRefused() {
    auto why = [](const std::string& text, int64_t h, int64_t w) {
      try {
        rleFromString(text, h, w);
      } catch (const std::invalid_argument& e) {
        return QString(e.what());
      }
      return QString("(no error)");
    };
    const uint8_t one[] = {0, 1, 1, 0, 1, 0};
    const std::string text = rleToString(rleEncode(one, 2, 3));
    QCOMPARE(why(text, 2, 3), QString("(no error)"));
    QVERIFY2(why(text, 3, 3).contains("cover 6 pixels, not the 3x3 = 9 of its size"), qPrintable(why(text, 3, 3)));
    QVERIFY2(why("1 2", 2, 3).contains("not COCO's (' ')"), qPrintable(why("1 2", 2, 3)));
    QVERIFY2(why(text + "P", 2, 3).contains("end in the middle of a number"), qPrintable(why(text + "P", 2, 3)));
    // A number of more than 7 chunks (35 bits; once a shift past 64 bits, found by fuzz_image).
    QVERIFY2(why("PPPPPPPP0", 2, 3).contains("a number too large"), qPrintable(why("PPPPPPPP0", 2, 3)));
  }
};

QTEST_GUILESS_MAIN(TestCocoMask)
#include "test_coco_mask.moc"
