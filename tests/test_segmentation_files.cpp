// A semantic segmentation's images and masks on disk
// (studio/segmentation_files.h, issue 61, item 1): a folder of images and a
// folder of PNG masks pair by relative path and stem, with the images
// without a mask and the masks without an image listed; two images of one
// stem refused; Pascal VOC's layout read from its lists, a missing file
// named with its list and line; VOC's class names as torchvision's
// segmentation weights name them (torchvision.models._meta._VOC_CATEGORIES,
// asked of torchvision here).
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "studio/errors.h"
#include "studio/segmentation_files.h"

using namespace studio;

namespace {

void touch(const QString& path) {
  QDir().mkpath(QFileInfo(path).path());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("x");
}

QString refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

}  // namespace

class TestSegmentationFiles : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void imagesPairWithTheirMasks() {
    QTemporaryDir dir;
    const QString img = dir.path() + "/images", msk = dir.path() + "/masks";
    for (const char* f : {"/a.jpg", "/street/b.PNG", "/street/c.jpeg", "/d.bmp", "/notes.txt", "/.hidden/e.jpg"})
      touch(img + f);
    for (const char* f : {"/a.png", "/street/b.png", "/street/c.png", "/z.png", "/a.txt"}) touch(msk + f);
    const SegmentationFiles s = pairImagesAndMasks(img.toStdString(), msk.toStdString());
    QCOMPARE(s.files.size(), size_t(3));
    QCOMPARE(QString::fromStdString(s.files[0].image), img + "/a.jpg");
    QCOMPARE(QString::fromStdString(s.files[0].mask), msk + "/a.png");
    QCOMPARE(QString::fromStdString(s.files[1].mask), msk + "/street/b.png");
    QCOMPARE(QString::fromStdString(s.files[2].image), img + "/street/c.jpeg");
    QCOMPARE(s.withoutMask, std::vector<std::string>{(img + "/d.bmp").toStdString()});
    QCOMPARE(s.withoutImage, std::vector<std::string>{(msk + "/z.png").toStdString()});
  }

  void whatCannotPairIsNamed() {
    QTemporaryDir dir;
    const std::string img = dir.path().toStdString() + "/images", msk = dir.path().toStdString() + "/masks";
    touch(QString::fromStdString(img + "/a.jpg"));
    QVERIFY2(refusal([&] {
               pairImagesAndMasks(img, msk);
             }).contains("the masks' folder " + QString::fromStdString(msk) + " does not exist"),
             qPrintable(refusal([&] { pairImagesAndMasks(img, msk); })));
    touch(QString::fromStdString(msk + "/b.png"));
    QVERIFY2(refusal([&] { pairImagesAndMasks(img, msk); }).contains("no image under"),
             qPrintable(refusal([&] { pairImagesAndMasks(img, msk); })));
    touch(QString::fromStdString(img + "/a.png"));
    QVERIFY2(refusal([&] { pairImagesAndMasks(img, msk); }).contains("share the stem a"),
             qPrintable(refusal([&] { pairImagesAndMasks(img, msk); })));
  }

  void vocsLayoutIsReadFromItsLists() {
    QTemporaryDir dir;
    const QString root = dir.path() + "/VOC2012";
    for (const char* stem : {"2007_000032", "2007_000039", "2007_000063"}) {
      touch(root + "/JPEGImages/" + stem + ".jpg");
      touch(root + "/SegmentationClass/" + stem + ".png");
    }
    QDir().mkpath(root + "/ImageSets/Segmentation");
    auto list = [&](const char* name, const char* text) {
      QFile f(root + "/ImageSets/Segmentation/" + name);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    };
    list("train.txt", "2007_000032\n2007_000039\n\n");
    list("val.txt", "2007_000063\r\n");
    QVERIFY(isVocSegmentation(root.toStdString()));
    const VocSegmentation v = readVocSegmentation(root.toStdString());
    QCOMPARE(v.train.size(), size_t(2));
    QCOMPARE(v.val.size(), size_t(1));
    QCOMPARE(QString::fromStdString(v.val[0].mask), root + "/SegmentationClass/2007_000063.png");
    list("val.txt", "2007_000063\n2008_000001\n");
    const QString why = refusal([&] { readVocSegmentation(root.toStdString()); });
    QVERIFY2(why.contains("val.txt line 2 names 2008_000001, but " + root + "/JPEGImages/2008_000001.jpg is missing"),
             qPrintable(why));
    QVERIFY(!isVocSegmentation(dir.path().toStdString()));
  }

  void vocClassesAreTorchvisions() {
    const test::Ran ran =
        test::runProgram(test::env("STUDIO_PYTHON"),
                         {"-c", "from torchvision.models._meta import _VOC_CATEGORIES as v; print('\\n'.join(v))"});
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    std::vector<std::string> want;
    for (const QString& line : ran.output.trimmed().split('\n')) want.push_back(line.toStdString());
    QCOMPARE(vocClassNames(), want);
  }
};

QTEST_GUILESS_MAIN(TestSegmentationFiles)
#include "test_segmentation_files.moc"
