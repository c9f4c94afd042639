// A semantic segmentation's masks and figures against the real things
// (issue 61, items 1 and 4):
//  - PNG masks (studio/mask_file.h) read as Pillow's np.array(Image.open())
//    gives them, which torchvision's references/segmentation train on: a
//    palette's indices (VOC's colours and its 255 border, 4-bit, a short
//    palette), 8-, 4-, 2- and 1-bit gray, 16-bit gray; colour, gray with
//    alpha, a 16-bit value past 255 and a truncated file refused by name;
//  - a mask the studio writes opens in Pillow as a palette PNG with VOC's
//    colours and the same values;
//  - a mask whose size is not its image's, or with a value outside the
//    classes that is not the ignore index, is named with where;
//  - the confusion matrix (studio/segmentation_figures.h) is the
//    references' ConfusionMatrix's and scikit-learn's, exactly, and its
//    figures their compute()'s (in float64: 1e-12; theirs in float32: 1e-6)
//    and scikit-learn's IoU (jaccard_score) and Dice (f1_score) per class,
//    a class in neither the truth nor the predictions undefined.
// Oracle: tests/reference/segmentation_reference.py, run by make_references.py.
#include "test_support.h"

#include <cmath>
#include <fstream>
#include <iterator>

#include <QTemporaryDir>

#include "studio/errors.h"
#include "studio/mask_file.h"
#include "studio/segmentation_figures.h"

using namespace studio;

namespace {

std::string folder() { return std::string(std::getenv("STUDIO_REFERENCE_DIR")) + "/segmentation"; }

std::vector<uint8_t> bytesOf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

nlohmann::json fixture() { return nlohmann::json::parse(test::readText(folder() + "/figures.json")); }

QString refusal(const std::string& path) {
  try {
    decodeMaskFile(path);
  } catch (const DataError& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

// Undefined (null in the fixture, NaN here) on both sides, or within tol.
void sameFigures(const std::vector<double>& got, const nlohmann::json& want, double tol, const char* what) {
  QCOMPARE(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    if (want[k].is_null()) {
      QVERIFY2(std::isnan(got[k]),
               qPrintable(QString("%1 of class %2: %3, undefined in the reference").arg(what).arg(k).arg(got[k])));
      continue;
    }
    QVERIFY2(
        std::fabs(got[k] - want[k].get<double>()) <= tol,
        qPrintable(QString("%1 of class %2: %3 against %4").arg(what).arg(k).arg(got[k]).arg(want[k].get<double>())));
  }
}

}  // namespace

class TestSegmentationFigures : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void masksReadAsPillowsArrays() {
    const auto masks = fixture()["masks"];
    QCOMPARE(masks.size(), size_t(8));
    for (const auto& [name, info] : masks.items()) {
      const std::string stem = folder() + "/masks/" + name.substr(0, name.size() - 4);
      const Mask m = decodeMaskFile(folder() + "/masks/" + name);
      QCOMPARE(m.height, info["height"].get<int64_t>());
      QCOMPARE(m.width, info["width"].get<int64_t>());
      QVERIFY2(m.values == bytesOf(stem + ".values"), name.c_str());
    }
  }

  void masksThatAreNotMasksAreNamed() {
    const std::string m = folder() + "/masks/";
    QVERIFY2(refusal(m + "rgb.png")
                 .contains("mask " + QString::fromStdString(m) +
                           "rgb.png is not a readable "
                           "mask: RGB colour, not one value per pixel"),
             qPrintable(refusal(m + "rgb.png")));
    QVERIFY2(refusal(m + "la.png").contains("gray with alpha, not one value per pixel"),
             qPrintable(refusal(m + "la.png")));
    QVERIFY2(refusal(m + "gray16_300.png")
                 .contains("has the value 300 (at x 7, y 5): a 16-bit mask's values must be at most 255"),
             qPrintable(refusal(m + "gray16_300.png")));
    QVERIFY2(refusal(m + "truncated.png").contains("truncated.png is not a readable mask"),
             qPrintable(refusal(m + "truncated.png")));
    QVERIFY2(refusal(m + "gray8.values").contains("gray8.values is not a PNG file"),
             qPrintable(refusal(m + "gray8.values")));
    QVERIFY2(refusal(m + "missing.png").contains("missing.png"), qPrintable(refusal(m + "missing.png")));
  }

  void aWrittenMaskOpensInPillowWithVocsColours() {
    QTemporaryDir dir;
    Mask m;
    m.height = 5;
    m.width = 7;
    for (int64_t i = 0; i < 35; ++i) m.values.push_back(static_cast<uint8_t>(i % 6 == 5 ? 255 : i % 21));
    const std::string path = dir.path().toStdString() + "/written.png";
    writeMaskPng(path, m, vocPalette());
    const test::Ran read = test::python("segmentation_reference.py", {"read", QString::fromStdString(path)});
    QVERIFY2(read.code == 0, qPrintable(read.output));
    const auto got = nlohmann::json::parse(read.output.toStdString());
    QCOMPARE(got["mode"].get<std::string>(), std::string("P"));
    QCOMPARE(got["height"].get<int64_t>(), m.height);
    QCOMPARE(got["width"].get<int64_t>(), m.width);
    QCOMPARE(got["values"].get<std::vector<uint8_t>>(), m.values);
    const auto palette = got["palette"].get<std::vector<int>>();
    for (int v : {0, 1, 15, 20, 255})
      for (int c = 0; c < 3; ++c)
        QCOMPARE(palette[static_cast<size_t>(v * 3 + c)],
                 int(vocPalette()[static_cast<size_t>(v)][static_cast<size_t>(c)]));
    QCOMPARE(decodeMaskFile(path).values, m.values);  // and back
  }

  void aMaskThatDoesNotFitItsImageOrClassesIsNamed() {
    const Mask m = decodeMaskFile(folder() + "/masks/voc_palette.png");  // 27x19, classes 0..20 and the border 255
    QCOMPARE(QString::fromStdString(maskProblem(m, "m.png", 19, 27, 21, 255)), QString());
    QCOMPARE(QString::fromStdString(maskProblem(m, "m.png", 20, 27, 21, 255)),
             QString("mask m.png is 27x19 but its image is 27x20 (width x height): a mask has its image's size"));
    const QString fewer = QString::fromStdString(maskProblem(m, "m.png", 19, 27, 5, 255));
    QVERIFY2(fewer.startsWith("mask m.png has the value ") &&
                 fewer.endsWith("the classes are 0 to 4, and 255 is the ignore index (data.ignore_index)"),
             qPrintable(fewer));
    // Without an ignore index, the border's 255 is a value outside the classes.
    const QString border = QString::fromStdString(maskProblem(m, "m.png", 19, 27, 21, -1));
    QVERIFY2(border.startsWith("mask m.png has the value 255 (at x 0, y 0): the classes are 0 to 20"),
             qPrintable(border));
  }

  void figuresAreTheReferencesAndScikitLearns_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("every class") << "every_class";
    QTest::newRow("absent classes") << "absent_classes";
  }
  void figuresAreTheReferencesAndScikitLearns() {
    QFETCH(QString, name);
    const auto want = fixture()["cases"][name.toStdString()];
    const int64_t classes = want["classes"], masks = want["masks"];
    const int64_t pixels = want["height"].get<int64_t>() * want["width"].get<int64_t>();
    const auto truth = bytesOf(folder() + "/" + name.toStdString() + ".truth");
    const auto predicted = bytesOf(folder() + "/" + name.toStdString() + ".predicted");
    QCOMPARE(int64_t(truth.size()), masks * pixels);
    ConfusionMatrix whole(classes);
    for (int64_t k = 0; k < masks; ++k) {  // a mask at a time, summed, as an evaluation adds its batches
      ConfusionMatrix one(classes);
      one.add(truth.data() + k * pixels, predicted.data() + k * pixels, pixels);
      whole.add(one);
    }
    std::vector<int64_t> flat;
    for (const auto& row : want["matrix"])
      for (const auto& v : row) flat.push_back(v.get<int64_t>());
    QCOMPARE(whole.counts(), flat);
    std::vector<int64_t> sklearn;
    for (const auto& row : want["sklearn_matrix"])
      for (const auto& v : row) sklearn.push_back(v.get<int64_t>());
    QCOMPARE(whole.counts(), sklearn);

    const SegmentationFigures f = segmentationFigures(whole);
    QVERIFY(std::fabs(f.pixelAccuracy - want["acc_global"].get<double>()) <= 1e-12);
    QVERIFY(std::fabs(f.pixelAccuracy - want["acc_global_float32"].get<double>()) <= 1e-6);
    sameFigures(f.classAccuracy, want["acc"], 1e-12, "class accuracy");
    sameFigures(f.iou, want["iu"], 1e-12, "IoU");
    sameFigures(f.iou, want["iu_float32"], 1e-6, "IoU (float32)");
    // scikit-learn's per class, where the class is in the truth or the predictions.
    std::vector<double> jaccard = want["sklearn_jaccard"].get<std::vector<double>>(),
                        f1 = want["sklearn_f1"].get<std::vector<double>>();
    nlohmann::json jaccardDefined = nlohmann::json::array(), f1Defined = nlohmann::json::array();
    for (size_t k = 0; k < jaccard.size(); ++k) {
      const bool defined = !std::isnan(f.iou[k]);
      jaccardDefined.push_back(defined ? nlohmann::json(jaccard[k]) : nlohmann::json());
      f1Defined.push_back(defined ? nlohmann::json(f1[k]) : nlohmann::json());
    }
    sameFigures(f.iou, jaccardDefined, 1e-12, "IoU against jaccard_score");
    sameFigures(f.dice, f1Defined, 1e-12, "Dice against f1_score");
    // The means over the classes that have the figure (numpy's nanmean of the references').
    auto nanMean = [](const nlohmann::json& v) {
      double s = 0;
      int n = 0;
      for (const auto& x : v)
        if (!x.is_null()) s += x.get<double>(), ++n;
      return s / n;
    };
    QVERIFY(std::fabs(f.meanIou - nanMean(want["iu"])) <= 1e-12);
    QVERIFY(std::fabs(f.meanClassAccuracy - nanMean(want["acc"])) <= 1e-12);
    QVERIFY(std::fabs(f.meanDice - nanMean(f1Defined)) <= 1e-12);
    // Frequency-weighted IoU: each class's IoU by its share of the truth's pixels.
    double weighted = 0, total = 0;
    for (int64_t t = 0; t < classes; ++t) {
      double row = 0;
      for (int64_t p = 0; p < classes; ++p) row += static_cast<double>(flat[static_cast<size_t>(t * classes + p)]);
      if (row > 0) weighted += row * want["iu"][static_cast<size_t>(t)].get<double>();
      total += row;
    }
    QVERIFY(std::fabs(f.frequencyWeightedIou - weighted / total) <= 1e-12);
    QCOMPARE(f.pixels, int64_t(total));
    if (name == "absent_classes") {  // class 5 in neither: undefined; class 4 predicted only: IoU 0
      QVERIFY(std::isnan(f.iou[5]) && std::isnan(f.dice[5]) && std::isnan(f.classAccuracy[5]));
      QCOMPARE(f.iou[4], 0.0);
      QVERIFY(std::isnan(f.classAccuracy[4]));
    }
  }

  void aPredictionOutsideTheClassesIsRefused() {
    ConfusionMatrix m(3);
    const uint8_t truth[] = {0, 1, 255}, predicted[] = {0, 3, 1};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, m.add(truth, predicted, 3));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ConfusionMatrix::fromCounts(3, {1, 2}));
  }
};

QTEST_GUILESS_MAIN(TestSegmentationFigures)
#include "test_segmentation_figures.moc"
