// Image data: PNG, JPEG, BMP, PGM and PPM files (written here with libpng and
// TurboJPEG, and by Pillow for the kinds those writers do not make) decode
// and resize to exactly what Pillow and torch give in Python; the decoded
// cache is used when nothing changed and rebuilt when a file did; unreadable
// images stop the load or are skipped, by setting; image folders' layouts
// and mistakes give the right splits or messages.
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>

#include <algorithm>
#include <filesystem>
#include <set>

#include <sys/stat.h>
#include <utime.h>

#include "data/data_loading.h"
#include "data/decoded_images.h"
#include "studio/data_plan.h"
#include "studio/image_file.h"
#include "studio/image_folder.h"

using namespace studio;

namespace {

Image pattern(int64_t h, int64_t w, int64_t c, int seed) {
  Image img;
  img.height = h;
  img.width = w;
  img.channels = c;
  uint32_t x = static_cast<uint32_t>(seed) * 2654435761u + 1;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t i = 0; i < w; ++i)
      for (int64_t k = 0; k < c; ++k) {
        x = x * 1103515245u + 12345u;
        img.pixels.push_back(static_cast<uint8_t>((i * 7 + y * 13 + 60 * k + ((x >> 16) % 30)) % 256));
      }
  return img;
}

std::string path(const QTemporaryDir& d, const QString& name) { return (d.path() + "/" + name).toStdString(); }

void writeBytes(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// root/<class>/<n>.png for each class and count.
void makeFolder(const QString& root, const std::vector<std::pair<QString, int>>& classes, int seed = 0) {
  for (const auto& [name, n] : classes) {
    QDir().mkpath(root + "/" + name);
    for (int i = 0; i < n; ++i)
      writePngFile((root + "/" + name + QString("/%1.png").arg(i, 3, 10, QChar('0'))).toStdString(),
                   pattern(8, 8, 1, seed + i));
  }
}

}  // namespace

class TestImageData : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void decodesAsPythonDoes() {
    QTemporaryDir dir;
    writePngFile(path(dir, "cpp_gray.png"), pattern(21, 17, 1, 1));
    writePngFile(path(dir, "cpp_rgb.png"), pattern(18, 26, 3, 2));
    writeJpegFile(path(dir, "cpp_gray.jpg"), pattern(24, 20, 1, 3), 90);
    writeJpegFile(path(dir, "cpp_rgb.jpeg"), pattern(33, 29, 3, 4), 80);
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.start(std::getenv("STUDIO_PYTHON"),
            {QString(std::getenv("STUDIO_TEST_SCRIPTS")) + "/image_reference.py", dir.path()});
    QVERIFY(p.waitForFinished(test::kHangLimitMs));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QStringList lines = QString(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13 * 2 * 2);  // 13 files, 1 and 3 channels, own size and 20x24
    for (const QString& line : lines) {
      const QStringList f = line.split(' ');
      const QString name = f[0];
      const int64_t c = f[1].toLongLong(), h = f[2].toLongLong(), w = f[3].toLongLong();
      const torch::Tensor got = decodeImageTensor(path(dir, name), c, h, w);
      const std::string ref = test::readText(path(dir, QString("ref/%1.%2.%3x%4.u8").arg(name).arg(c).arg(h).arg(w)));
      QCOMPARE(static_cast<int64_t>(ref.size()), c * h * w);
      const torch::Tensor want = torch::from_blob(const_cast<char*>(ref.data()), {c, h, w}, torch::kUInt8).clone();
      const int64_t differ = got.ne(want).sum().item<int64_t>();
      QVERIFY2(
          differ == 0,
          qPrintable(QString("%1: %2 of %3 values differ from Pillow/torch").arg(line).arg(differ).arg(c * h * w)));
    }
    const ImageHeader png = readImageHeader(path(dir, "cpp_rgb.png"));
    QCOMPARE(png.height, int64_t(18));
    QCOMPARE(png.width, int64_t(26));
    QCOMPARE(png.channels, int64_t(3));
    QCOMPARE(png.kind, std::string("png"));
    QCOMPARE(readImageHeader(path(dir, "cpp_gray.jpg")).channels, int64_t(1));
    QCOMPARE(readImageHeader(path(dir, "pil_gray.bmp")).kind, std::string("bmp"));
  }

  void cacheIsUsedUntilAFileChanges() {
    QTemporaryDir dir, cache;
    qputenv("STUDIO_DATA_CACHE", cache.path().toUtf8());
    DecodeRequest r;
    for (int i = 0; i < 40; ++i) {
      const std::string p = path(dir, QString("%1.png").arg(i));
      writePngFile(p, pattern(12 + i % 3, 10, 3, i));
      r.files.push_back(p);
    }
    r.channels = 1;
    r.height = 16;
    r.width = 16;
    int64_t reports = 0;
    LoadProgress progress;
    progress.report = [&](const std::string&, int64_t, int64_t) { ++reports; };
    const DecodedImages first = decodeImages(r, progress);
    QVERIFY(!first.fromCache);
    QVERIFY(reports > 0);
    QVERIFY2(QFile::exists(QString::fromStdString(first.cacheFile)), first.cacheFile.c_str());
    const DecodedImages second = decodeImages(r, {});
    QVERIFY(second.fromCache);
    QCOMPARE(second.cacheFile, first.cacheFile);
    QVERIFY(torch::equal(first.images, second.images));
    QCOMPARE(second.images.sizes().vec(), (std::vector<int64_t>{40, 1, 16, 16}));
    // Each row is what decoding that one file gives.
    QVERIFY(torch::equal(second.images[7], decodeImageTensor(r.files[7], 1, 16, 16)));
    // Another size is another entry; a changed file (a new time) a new decode.
    r.height = 12;
    QVERIFY(!decodeImages(r, {}).fromCache);
    QVERIFY(decodeImages(r, {}).fromCache);
    utimbuf times{1000000000, 1000000000};
    QCOMPARE(utime(r.files[3].c_str(), &times), 0);
    QVERIFY(!decodeImages(r, {}).fromCache);
    qunsetenv("STUDIO_DATA_CACHE");
  }

  // The normalisation's statistics: the mean and unbiased std of the
  // training pixels in [0, 1], per channel. Fashion-MNIST against the
  // installed PyTorch in Python (tests/reference/make_references.py); three
  // channels against LibTorch's mean and std of the decoded training split.
  void normalisationStatisticsMatchPyTorch() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.data.train_limit = 0;
    const auto ref = test::loadReference("data_statistics");
    const DataSplits d = loadData(c, planData(c), {});
    QCOMPARE(d.train->size() * 28 * 28, ref["count"].get<int64_t>());
    QVERIFY2(test::close(d.mean[0], ref["mean"].get<double>(), 1e-12, 0),
             qPrintable(
                 QString("mean %1, PyTorch %2").arg(d.mean[0], 0, 'g', 17).arg(ref["mean"].get<double>(), 0, 'g', 17)));
    QVERIFY2(
        test::close(d.std[0], ref["std"].get<double>(), 1e-12, 0),
        qPrintable(QString("std %1, PyTorch %2").arg(d.std[0], 0, 'g', 17).arg(ref["std"].get<double>(), 0, 'g', 17)));

    const QString root = dir.path() + "/rgb";
    for (const QString& name : {QString("cat"), QString("dog")}) {
      QDir().mkpath(root + "/" + name);
      for (int i = 0; i < 30; ++i)
        writePngFile((root + "/" + name + QString("/%1.png").arg(i)).toStdString(),
                     pattern(9, 7, 3, i + (name == "dog" ? 100 : 0)));
    }
    TrainConfig f;
    f.data.format = DataFormat::image_folder;
    f.data.root = root.toStdString();
    f.data.test_fraction = 0.2;
    qputenv("STUDIO_DATA_CACHE", (dir.path() + "/cache").toUtf8());
    const DataSplits rgb = loadData(f, planData(f), {});
    qunsetenv("STUDIO_DATA_CACHE");
    const torch::Tensor px = rgb.train->all().x.to(torch::kFloat64).div(255.0).transpose(0, 1).reshape({3, -1});
    const torch::Tensor mean = px.mean(1), std = px.std(1);
    for (int64_t ch = 0; ch < 3; ++ch) {
      QVERIFY2(test::close(rgb.mean[static_cast<size_t>(ch)], mean[ch].item<double>(), 1e-12, 0),
               qPrintable(QString("mean of channel %1").arg(ch)));
      QVERIFY2(test::close(rgb.std[static_cast<size_t>(ch)], std[ch].item<double>(), 1e-12, 0),
               qPrintable(QString("std of channel %1").arg(ch)));
    }
    QVERIFY(rgb.mean[0] != rgb.mean[1] && rgb.mean[1] != rgb.mean[2]);  // the channels are told apart
  }

  // Data "resident on the device" is not copied when the device is the CPU
  // it was loaded on (a copy only doubled the memory it takes).
  void cpuResidentDataIsTheLoadedData() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    const DataSplits d = loadData(c, planData(c), {});
    QVERIFY(onDevice(d.train, torch::kCPU).get() == d.train.get());
    QVERIFY(onDevice(d.test, torch::kCPU).get() == d.test.get());
  }

  // IDX images are inflated once, then read from the cache; an entry of the
  // wrong length is ignored (and rewritten), a changed file inflated afresh.
  void idxImagesAreCached() {
    QTemporaryDir dir, cache;
    qputenv("STUDIO_DATA_CACHE", cache.path().toUtf8());
    TrainConfig c = test::smallConfig(dir.path());
    const DataPlan plan = planData(c);
    auto trainImages = [&] { return loadData(c, plan, {}).train->gather(torch::arange(512)).x; };
    const torch::Tensor first = trainImages();
    const QStringList entries = QDir(cache.path()).entryList({"idx-*.u8"}, QDir::Files);
    QCOMPARE(entries.size(), 2);  // training and test images
    const torch::Tensor second = trainImages();
    QVERIFY(torch::equal(first, second));
    // The pixels really come from the cache: its entries, altered in place
    // (same length), change what loads.
    for (const QString& e : entries) {
      QFile f(cache.path() + "/" + e);
      QVERIFY(f.open(QIODevice::ReadWrite));
      QByteArray bytes = f.readAll();
      for (qsizetype i = 24; i < bytes.size(); ++i) bytes[i] = static_cast<char>(255 - static_cast<uint8_t>(bytes[i]));
      f.seek(0);
      f.write(bytes);
    }
    QVERIFY(torch::equal(trainImages(), 255 - first));
    // Truncated entries are ignored: the files are inflated again.
    for (const QString& e : entries) QVERIFY(QFile::resize(cache.path() + "/" + e, 1000));
    QVERIFY(torch::equal(trainImages(), first));
    QVERIFY(torch::equal(trainImages(), first));
    qunsetenv("STUDIO_DATA_CACHE");
  }

  void unreadableImagesStopOrAreSkipped() {
    QTemporaryDir dir, cache;
    qputenv("STUDIO_DATA_CACHE", cache.path().toUtf8());
    DecodeRequest r;
    r.channels = 3;
    r.height = 8;
    r.width = 8;
    const std::string png = encodePng(pattern(8, 8, 3, 9));
    writeBytes(path(dir, "0-good.png"), png);
    writeBytes(path(dir, "1-truncated.png"), png.substr(0, png.size() / 2));
    writeBytes(path(dir, "2-noise.jpg"), std::string(300, '\x5a'));
    writeBytes(path(dir, "3-empty.png"), "");
    const std::string jpeg = encodeJpeg(pattern(64, 64, 3, 1));
    writeBytes(path(dir, "4-jpeg-cut.jpg"), jpeg.substr(0, jpeg.size() * 2 / 3));  // cut in the scan data
    for (const char* n : {"0-good.png", "1-truncated.png", "2-noise.jpg", "3-empty.png", "4-jpeg-cut.jpg"})
      r.files.push_back(path(dir, n));
    const QString stop = test::dataErrorOf([&] { decodeImages(r, {}); });
    QVERIFY2(stop.contains("1-truncated.png") && stop.contains("data.on_bad_file"), qPrintable(stop));
    r.skipBadFiles = true;
    const DecodedImages d = decodeImages(r, {});
    QCOMPARE(d.bad, (std::vector<int64_t>{1, 2, 3, 4}));
    QVERIFY(QString::fromStdString(d.badReasons[1]).contains("2-noise.jpg"));
    QVERIFY(QString::fromStdString(d.badReasons[1]).contains("not a PNG, JPEG, BMP, PGM or PPM"));
    QVERIFY(QString::fromStdString(d.badReasons[2]).contains("is empty"));
    QVERIFY2(QString::fromStdString(d.badReasons[3]).contains("4-jpeg-cut.jpg is a damaged JPEG"),
             d.badReasons[3].c_str());
    QVERIFY(torch::equal(d.images[0], decodeImageTensor(r.files[0], 3, 8, 8)));
    // Cached with its bad files: the fail setting still fails on them.
    r.skipBadFiles = false;
    QVERIFY(test::dataErrorOf([&] { decodeImages(r, {}); }).contains("1-truncated.png"));
    qunsetenv("STUDIO_DATA_CACHE");
  }

  void headersDeclaringHugeImagesAreRefusedBeforeAllocating() {
    // Found by fuzz_image: a 100-byte BMP declaring 4 GB of pixels, which
    // TurboJPEG's loader would allocate; and its PPM counterpart.
    QTemporaryDir dir;
    std::string bmp = "BM" + std::string(28, '\0');
    bmp[10] = 54;
    bmp[14] = 40;
    bmp[18] = bmp[19] = 0x00, bmp[20] = 0x01, bmp[21] = 0x00;        // width 65536
    bmp[22] = 0x00, bmp[23] = 0x00, bmp[24] = 0x01, bmp[25] = 0x00;  // height 65536
    bmp[26] = 1;
    bmp[28] = 24;
    bmp += std::string(70, '\x7f');
    writeBytes(path(dir, "huge.bmp"), bmp);
    QVERIFY(test::dataErrorOf([&] { decodeImageFile(path(dir, "huge.bmp")); }).contains("is too large"));
    // A valid PNG header of 60000x60000 gray pixels (libpng's user limit said only "Invalid IHDR data").
    auto crc32 = [](const std::string& bytes) {  // PNG's CRC (ISO 3309), bit by bit
      uint32_t c = 0xffffffffu;
      for (unsigned char b : bytes) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
      }
      return c ^ 0xffffffffu;
    };
    auto be32 = [](uint32_t v) {
      return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
    };
    const std::string ihdr = "IHDR" + be32(60000) + be32(60000) + std::string("\x08\x00\x00\x00\x00", 5);
    writeBytes(path(dir, "huge.png"), std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + ihdr + be32(crc32(ihdr)));
    const QString png = test::dataErrorOf([&] { decodeImageFile(path(dir, "huge.png")); });
    QVERIFY2(png.contains("is too large to train on (60000x60000 pixels)"), qPrintable(png));
    writeBytes(path(dir, "short.ppm"), "P6\n# made by hand\n4000 3000\n255\n" + std::string(100, 'x'));
    QVERIFY(test::dataErrorOf([&] { decodeImageFile(path(dir, "short.ppm")); }).contains("is truncated"));
  }

  void folderMistakesAreNamed_data() {
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing") << "missing"
                             << "does not exist";
    QTest::newRow("a file") << "file"
                            << "is a file, not a folder";
    QTest::newRow("no class folders") << "flat"
                                      << "holds no class folders";
    QTest::newRow("empty class") << "empty-class"
                                 << "holds no images";
    QTest::newRow("one class") << "one-class"
                               << "a classifier needs at least 2 classes";
    QTest::newRow("test class unknown") << "test-extra"
                                        << "has no counterpart";
  }
  void folderMistakesAreNamed() {
    QFETCH(QString, layout);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString root = dir.path() + "/data";
    if (layout == "file") writeBytes(root.toStdString(), "x");
    if (layout == "flat") {
      QDir().mkpath(root);
      writePngFile((root + "/a.png").toStdString(), pattern(4, 4, 1, 0));
    }
    if (layout == "empty-class") {
      makeFolder(root, {{"cat", 2}, {"dog", 0}});
      writeBytes((root + "/dog/readme.txt").toStdString(), "no images here");
    }
    if (layout == "one-class") makeFolder(root, {{"cat", 3}});
    if (layout == "test-extra") {
      makeFolder(root + "/train", {{"cat", 2}, {"dog", 2}});
      makeFolder(root + "/test", {{"cat", 1}, {"fox", 1}});
    }
    const QString e = test::dataErrorOf([&] { scanImageFolder(root.toStdString()); });
    QVERIFY2(e.contains(message), qPrintable(e));
    QVERIFY2(e.contains(root), qPrintable(e));
  }

  void folderLayoutsGiveTheirSplits() {
    QTemporaryDir dir;
    // Class folders only: the test set is held out per class.
    const QString flat = dir.path() + "/flat";
    makeFolder(flat, {{"b-dog", 10}, {"a-cat", 20}});
    QDir().mkpath(flat + "/a-cat/more");
    writePngFile((flat + "/a-cat/more/x.png").toStdString(), pattern(8, 8, 1, 99));
    writeBytes((flat + "/a-cat/notes.txt").toStdString(), "not an image");
    writeBytes((flat + "/a-cat/.hidden.png").toStdString(), "hidden");
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = flat.toStdString();
    c.data.test_fraction = 0.2;
    c.data.val_fraction = 0.25;
    DataPlan p = planData(c);
    QCOMPARE(p.classNames, (std::vector<std::string>{"a-cat", "b-dog"}));
    QCOMPARE(p.otherFiles, int64_t(1));
    QCOMPARE(p.test.size(), int64_t(4 + 2));  // floor(0.2 * 21) + floor(0.2 * 10)
    QCOMPARE(p.val.size(), int64_t(4 + 2));   // floor(0.25 * 17) + floor(0.25 * 8)
    QCOMPARE(p.train.size(), int64_t(31 - 6 - 6));
    QVERIFY(p.testFrom.find("20% of each class") != std::string::npos);
    // The same seed, the same split; another seed, another.
    QCOMPARE(planData(c).test.items, p.test.items);
    c.train.seed = 2;
    QVERIFY(planData(c).test.items != p.test.items);
    // train/ test/ val/ folders: each split from its folder.
    const QString split = dir.path() + "/split";
    makeFolder(split + "/train", {{"cat", 5}, {"dog", 6}});
    makeFolder(split + "/test", {{"cat", 2}, {"dog", 3}});
    makeFolder(split + "/val", {{"dog", 1}});
    c.data.root = split.toStdString();
    p = planData(c);
    QCOMPARE(p.train.size(), int64_t(11));
    QCOMPARE(p.test.size(), int64_t(5));
    QCOMPARE(p.val.size(), int64_t(1));
    QCOMPARE(p.val.labels.front(), int64_t(1));
    QVERIFY(p.testFrom.find("/test") != std::string::npos);
    // Without a test folder and with no fraction to hold out, there is nothing to test on.
    const QString noTest = dir.path() + "/no-test";
    makeFolder(noTest + "/train", {{"cat", 2}, {"dog", 2}});
    c.data.root = noTest.toStdString();
    c.data.test_fraction = 0;
    QVERIFY(test::dataErrorOf([&] { planData(c); }).contains("data.test_fraction"));
  }

  // A flat folder with a labels file (the Label tab's file,label,made_by):
  // the labelled images train and test, the unlabelled are left out, and an
  // image's split depends on its name alone, so that more labels keep the
  // earlier test images in the test split (issue 62, item 5).
  void labelsFileGivesAFixedSplit() {
    QTemporaryDir dir;
    const QString root = dir.path() + "/photos";
    QDir().mkpath(root);
    for (int i = 0; i < 60; ++i)
      writePngFile((root + QString("/%1.png").arg(i, 3, 10, QChar('0'))).toStdString(), pattern(8, 8, 1, i));
    const std::string labels = path(dir, "labels.csv");
    auto writeLabels = [&](int n) {
      std::string csv = "file,label,made_by\n";
      for (int i = 0; i < n; ++i)
        csv += QString("%1.png,%2,person\n").arg(i, 3, 10, QChar('0')).arg(i % 3 ? "dog" : "cat").toStdString();
      csv += QString("%1.png,,person\n").arg(n, 3, 10, QChar('0')).toStdString();  // an empty label: not yet
      writeBytes(labels, csv);
    };
    writeLabels(20);
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = root.toStdString();
    c.data.targets_file = labels;
    c.data.test_fraction = 0.3;
    DataPlan p = planData(c);
    QCOMPARE(p.classNames, (std::vector<std::string>{"cat", "dog"}));
    QCOMPARE(p.train.size() + p.test.size(), int64_t(20));
    QVERIFY(p.test.size() > 0 && p.train.size() > 0);
    auto testFiles = [](const DataPlan& plan) {
      std::set<std::string> names;
      for (int64_t item : plan.test.items)
        names.insert(std::filesystem::path(plan.files[static_cast<size_t>(item)]).filename().string());
      return names;
    };
    for (size_t k = 0; k < p.test.items.size(); ++k) {  // each test image with its own class
      const std::string name = std::filesystem::path(p.files[static_cast<size_t>(p.test.items[k])]).stem().string();
      QCOMPARE(p.test.labels[k], int64_t(std::stoi(name) % 3 ? 1 : 0));
    }
    const std::set<std::string> before = testFiles(p);
    writeLabels(50);
    const DataPlan more = planData(c);
    QCOMPARE(more.train.size() + more.test.size(), int64_t(50));
    const std::set<std::string> after = testFiles(more);
    QVERIFY(std::includes(after.begin(), after.end(), before.begin(), before.end()));
    QVERIFY(after.size() > before.size());
    // An image named twice, or not there, is refused with its row.
    writeBytes(labels, "file,label\n000.png,cat\n001.png,dog\n000.png,dog\n");
    QString e = test::dataErrorOf([&] { planData(c); });
    QVERIFY2(e.contains("row 4") && e.contains("named twice, in row 2"), qPrintable(e));
    writeBytes(labels, "file,label\n000.png,cat\nmissing.png,dog\n");
    e = test::dataErrorOf([&] { planData(c); });
    QVERIFY2(e.contains("row 3") && e.contains("missing.png") && e.contains("not a file under data.root"),
             qPrintable(e));
    writeBytes(labels, "file,label\n000.png,cat\n001.png,cat\n");
    QVERIFY(test::dataErrorOf([&] { planData(c); }).contains("at least 2 classes"));
  }
};

QTEST_GUILESS_MAIN(TestImageData)
#include "test_image_data.moc"
