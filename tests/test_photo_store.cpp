// Photos stored for the 224 px recipe (data.stored_size): JPEGs decode at the
// DCT scale Pillow's Image.draft picks, and are stored as
// torchvision.transforms.v2.functional's resize(S) + center_crop(S) of that
// (references: tests/reference/photo_reference.py, with the installed Pillow
// and torchvision); evaluation's centre crop is Resize(S) + CenterCrop(7S/8);
// a folder loads at the stored size, batches are cut to the input's, and the
// settings refuse a stored size below the input's.
#include "test_support.h"

#include <QDir>
#include <QProcess>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "data/decoded_images.h"
#include "studio/data_plan.h"
#include "studio/image_file.h"
#include "studio/studio_python.h"

using namespace studio;

namespace {

torch::Tensor readU8(const QString& file, const std::vector<int64_t>& shape) {
  const std::string bytes = test::readText(file.toStdString());
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (static_cast<int64_t>(bytes.size()) != n) return {};
  return torch::from_blob(const_cast<char*>(bytes.data()), shape, torch::kUInt8).clone();
}

int64_t maxDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kInt32) - b.to(torch::kInt32)).abs().max().item<int64_t>();
}

// A smooth colour photo-like image.
Image photo(int64_t h, int64_t w, int seed) {
  Image img;
  img.height = h;
  img.width = w;
  img.channels = 3;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int k = 0; k < 3; ++k)
        img.pixels.push_back(static_cast<uint8_t>((x * (3 + k) + y * (5 - k) + seed * 40 + ((x * y) % 7)) % 256));
  return img;
}

}  // namespace

class TestPhotoStore : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void photosAreStoredAsTorchvisionResizesAndCrops() {
    QTemporaryDir dir;
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.start(std::getenv("STUDIO_PYTHON"),
            {QString(std::getenv("STUDIO_TEST_SCRIPTS")) + "/photo_reference.py", dir.path()});
    QVERIFY(p.waitForFinished(test::kHangLimitMs));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QStringList lines = QString(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4 * 2 * 2);  // 4 files, 1 and 3 channels, stored sizes 64 and 37
    int reduced = 0;
    for (const QString& line : lines) {
      const QStringList f = line.split(' ');
      const std::string file = (dir.path() + "/" + f[0]).toStdString();
      const int64_t c = f[1].toLongLong(), s = f[2].toLongLong(), dh = f[3].toLongLong(), dw = f[4].toLongLong(),
                    crop = f[5].toLongLong();
      const QString stem = dir.path() + "/ref/" + f[0] + "." + f[1] + "." + f[2];
      // The reduced-scale decode: Pillow's draft size and pixels, exactly.
      const Image img = decodeImageFile(file, static_cast<int>(c), ImageFit{s, s, true});
      QVERIFY2(img.height == dh && img.width == dw, qPrintable(QString("%1: decoded %2x%3, Pillow's draft %4x%5")
                                                                   .arg(line)
                                                                   .arg(img.height)
                                                                   .arg(img.width)
                                                                   .arg(dh)
                                                                   .arg(dw)));
      const ImageHeader header = readImageHeader(file);
      if (header.height >= 2 * dh - 1) ++reduced;
      const torch::Tensor draft =
          torch::from_blob(const_cast<uint8_t*>(img.pixels.data()), {dh, dw, c}, torch::kUInt8).permute({2, 0, 1});
      const torch::Tensor wantDraft = readU8(stem + ".draft.u8", {c, dh, dw});
      QVERIFY(wantDraft.defined());
      QVERIFY2(torch::equal(draft.contiguous(), wantDraft),
               qPrintable(line + ": the draft's pixels differ from Pillow's"));
      // Stored: resize(S) + center_crop(S). Tolerance 1 grey level: torchvision
      // resizes uint8 in its own integer kernel, the studio in float32, rounded.
      const torch::Tensor stored = decodeImageTensor(file, c, s, s, /*cover=*/true);
      const torch::Tensor wantStored = readU8(stem + ".stored.u8", {c, s, s});
      QVERIFY(wantStored.defined());
      QVERIFY2(maxDifference(stored, wantStored) <= 1,
               qPrintable(line + QString(": stored differs by %1").arg(maxDifference(stored, wantStored))));
      // Evaluation: the stored image's centre is Resize(S) + CenterCrop(7S/8)
      // when S - 7S/8 is even (256 and 224): CenterCrop rounds a half offset
      // to even, so an odd margin may put the two crops a pixel apart.
      if ((s - crop) % 2 != 0) continue;
      const torch::Tensor eval = centreCrop(stored, crop, crop);
      const torch::Tensor wantEval = readU8(stem + ".eval.u8", {c, crop, crop});
      QVERIFY(wantEval.defined());
      QVERIFY2(maxDifference(eval, wantEval) <= 1,
               qPrintable(line + QString(": evaluation crop differs by %1").arg(maxDifference(eval, wantEval))));
    }
    QVERIFY2(reduced >= 8, qPrintable(QString("only %1 cases decoded at a reduced scale").arg(reduced)));
  }

  void aFolderLoadsAtTheStoredSizeAndBatchesAreCut() {
    QTemporaryDir dir;
    const QString root = dir.path() + "/photos";
    std::vector<std::string> files;
    for (const QString& name : {QString("cat"), QString("dog")}) {
      QDir().mkpath(root + "/" + name);
      for (int i = 0; i < 6; ++i) {
        const std::string f = (root + "/" + name + QString("/%1.jpg").arg(i)).toStdString();
        writeJpegFile(f, photo(60 + 10 * i, 90 - 5 * i, i + (name == "dog" ? 10 : 0)), 90);
      }
    }
    qputenv("STUDIO_DATA_CACHE", (dir.path() + "/cache").toUtf8());
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = root.toStdString();
    c.data.test_fraction = 0.25;
    c.data.image_size = {32, 32};
    c.data.stored_size = 40;
    QVERIFY(validate(c).empty());
    const DataPlan plan = planData(c);
    const DataSplits d = loadData(c, plan, {});
    QCOMPARE(d.input.height, int64_t(32));
    QCOMPARE(d.stored.height, int64_t(40));
    QCOMPARE(d.stored.width, int64_t(40));
    QVERIFY(d.stored.cover);
    const Examples all = d.train->all();
    QCOMPARE(all.x.sizes().vec(), (std::vector<int64_t>{d.train->size(), 3, 40, 40}));
    // Each row is its file as decodeImageTensor stores it.
    const std::string first = plan.files[static_cast<size_t>(d.trainItems.front())];
    QVERIFY(torch::equal(all.x[0], decodeImageTensor(first, 3, 40, 40, true)));

    LoaderOptions o;
    o.norm = Normalization::make(true, {0, 0, 0}, {1, 1, 1}, torch::kCPU);
    o.cropHeight = o.cropWidth = 32;
    // Evaluation: the centre, at CenterCrop's offsets (4 of 8 each side).
    const torch::Tensor eval = transformBatch(all.x, o, 1, /*augment=*/false);
    QCOMPARE(eval.sizes().vec(), (std::vector<int64_t>{d.train->size(), 3, 32, 32}));
    QVERIFY(torch::equal(eval, all.x.narrow(2, 4, 32).narrow(3, 4, 32).to(torch::kFloat32).div(255.0)));
    // Training with the random resized crop: its own part of the stored
    // image, resized to the input; without it, the centre with the flip.
    o.photo.resizedCrop = true;
    const torch::Tensor trained = transformBatch(all.x, o, 1, /*augment=*/true);
    QCOMPARE(trained.sizes().vec(), (std::vector<int64_t>{d.train->size(), 3, 32, 32}));
    QVERIFY(!torch::equal(trained, eval));
    o.photo.resizedCrop = false;
    o.augmentFlip = true;
    const torch::Tensor flipped = transformBatch(all.x, o, 1, /*augment=*/true);
    for (int64_t k = 0; k < flipped.size(0); ++k)
      QVERIFY(torch::equal(flipped[k], eval[k]) || torch::equal(flipped[k], eval[k].flip({2})));
    qunsetenv("STUDIO_DATA_CACHE");
    // Photos smaller than the stored size are enlarged to be stored (issue 41,
    // item 12): a warning names the setting and the photos' own size.
    QCOMPARE(storedAbovePhotos(d.stored, d.input, plan.files), std::string());
    const StoredShape above = storedShapeOf(d.input, [&] {
      DataConfig big = c.data;
      big.stored_size = 128;
      return big;
    }());
    const std::string warned = storedAbovePhotos(above, d.input, plan.files);
    QVERIFY2(QString::fromStdString(warned).contains("data.stored_size 128 is larger than the photos themselves"),
             warned.c_str());
    QVERIFY2(QString::fromStdString(warned).endsWith("set it to 0 or at most 80"), warned.c_str());

    // A backbone stores 8/7 of its input by default: 256 for 224.
    c.data.stored_size = 0;
    c.model.kind = "resnet18";
    c.data.image_size = {224, 224};
    QCOMPARE(storedShapeOf(InputShape{3, 224, 224, 0}, c.data, c.model.kind).height, int64_t(256));
    c.model.kind = "cnn";
    QVERIFY(!storedShapeOf(InputShape{3, 224, 224, 0}, c.data, c.model.kind).cover);  // squashed, as before
  }

  // Issue 60, item 11: an export's preprocess.py gives the studio's own
  // input tensors from image files (within 1e-6), reduced-scale JPEG decode
  // and 8-bit rounding included, with and without a stored size, colour and
  // gray, JPEGs shrunk and a PNG enlarged. The studio's side is predict's:
  // decodeImageTensor at the stored size, its centre at the input's, and
  // the batch's normalisation.
  void anExportsPreprocessPyGivesTheStudiosInputs() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    writeJpegFile(d + "/wide.jpg", photo(300, 452, 1), 90);
    writeJpegFile(d + "/tall.jpg", photo(515, 290, 2), 85);
    Image gray = photo(200, 160, 3);
    gray = decodeImage(encodePng(gray), "gray", 1, ImageFit{});
    writeJpegFile(d + "/gray.jpg", gray, 90);
    writePngFile(d + "/small.png", photo(22, 30, 4));
    const std::vector<std::string> files{"wide.jpg", "tall.jpg", "gray.jpg", "small.png"};
    QVERIFY(readImageHeader(d + "/wide.jpg").width >= 4 * 40);  // decoded at 1/4 for a stored 40
    const QString script = QString::fromStdString(studioScript("export/preprocess.py", nullptr));
    struct Case {
      int64_t channels, height, width, resize;
      std::vector<double> mean, std;
    };
    for (const Case& c : {Case{3, 32, 32, 40, {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}},
                          Case{1, 24, 36, 0, {0.5}, {0.25}}, Case{3, 28, 28, 0, {0.4, 0.5, 0.6}, {0.3, 0.2, 0.1}}}) {
      const QString folder = dir.filePath(QString("export-%1-%2").arg(c.channels).arg(c.resize));
      QDir().mkpath(folder);
      QVERIFY(QFile::copy(script, folder + "/preprocess.py"));
      nlohmann::json pre = {{"input", "image"},
                            {"input_shape", {{"channels", c.channels}, {"height", c.height}, {"width", c.width}}},
                            {"normalization", {{"mean", c.mean}, {"std", c.std}}}};
      if (c.resize > 0) {
        pre["resize"] = c.resize;
        pre["center_crop"] = {c.height, c.width};
      }
      std::ofstream((folder + "/preprocessing.json").toStdString()) << pre.dump(2);
      // The studio's.
      const bool stored = c.resize > 0;
      LoaderOptions o;
      o.norm = Normalization::make(true, c.mean, c.std, torch::kCPU);
      std::vector<torch::Tensor> xs;
      for (const auto& f : files) {
        const torch::Tensor pixels = decodeImageTensor(d + "/" + f, c.channels, stored ? c.resize : c.height,
                                                       stored ? c.resize : c.width, /*cover=*/stored);
        xs.push_back(centreCrop(pixels, c.height, c.width).contiguous());
      }
      const torch::Tensor studio = transformBatch(torch::stack(xs), o, 0, /*augment=*/false).contiguous();
      // preprocess.py's.
      const QString out = folder + "/x.f32";
      QStringList paths;
      for (const auto& f : files) paths << QString::fromStdString(d + "/" + f);
      const QStringList args = QStringList{"-c",
                                           "import sys; sys.path.insert(0, sys.argv[1]); "
                                           "from preprocess import preprocess; "
                                           "preprocess(sys.argv[3:], sys.argv[1]).numpy().tofile(sys.argv[2])",
                                           folder, out} +
                               paths;
      const test::Ran ran = test::runProgram(test::env("STUDIO_PYTHON"), args);
      QVERIFY2(ran.code == 0, qPrintable(ran.output));
      const std::string bytes = test::readText(out.toStdString());
      QCOMPARE(static_cast<int64_t>(bytes.size()), studio.numel() * 4);
      const torch::Tensor python =
          torch::from_blob(const_cast<char*>(bytes.data()), studio.sizes(), torch::kFloat32).clone();
      const double worst = (python - studio).abs().max().item<double>();
      QVERIFY2(worst <= 1e-6,
               qPrintable(QString("preprocess.py differs from the studio's inputs by %1 (%2)").arg(worst).arg(folder)));
    }
  }

  void aStoredSizeBelowTheInputIsRefused() {
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = "/tmp";
    c.data.image_size = {48, 64};
    c.data.stored_size = 40;
    QString said;
    for (const auto& e : validate(c))
      if (e.field == "data.stored_size") said = QString::fromStdString(e.text());
    QVERIFY2(said.contains("48") && said.contains("40"), qPrintable(said));
    // A non-square input keeps its shape when stored: the shorter side to 60.
    c.data.stored_size = 60;
    const StoredShape s = storedShapeOf(InputShape{3, 48, 64, 0}, c.data);
    QCOMPARE(s.height, int64_t(60));
    QCOMPARE(s.width, int64_t(80));
    // An automatic input size smaller than the stored one is refused when known.
    QString refused;
    try {
      storedShapeOf(InputShape{3, 72, 72, 0}, c.data);
    } catch (const InputError& e) {
      refused = e.what();
    }
    QVERIFY2(refused.contains("data.stored_size") && refused.contains("72"), qPrintable(refused));
    // Far above the input (4096 for 32 px: a 5.8 GB cache for 120 photos, then a bare allocation failure):
    // refused by name, with the largest that is taken.
    c.data.stored_size = 4096;
    refused.clear();
    try {
      storedShapeOf(InputShape{3, 32, 32, 0}, c.data);
    } catch (const InputError& e) {
      refused = e.what();
    }
    QVERIFY2(refused.contains("data.stored_size 4096 is more than 4 times") && refused.contains("at most 128"),
             qPrintable(refused));
    c.data.stored_size = 128;
    QCOMPARE(storedShapeOf(InputShape{3, 32, 32, 0}, c.data).height, int64_t(128));
  }
};

QTEST_GUILESS_MAIN(TestPhotoStore)
#include "test_photo_store.moc"
