// training-studio-cli predict and the Predictor (studio/predict.h), on a
// small image folder of real Fashion-MNIST images (PNG and JPEG) and a table
// of their pooled pixels, each trained briefly on the CPU here:
//  - the probabilities of every image and row equal, within 1e-5, those of
//    the run's export in Python with the installed PyTorch
//    (reference/predict_reference.py), from the run folder and the export alike;
//  - given the run's own test split, the labelled accuracy is the run's test
//    accuracy;
//  - --tta flip is the mean of the image's and its mirror's probabilities;
//  - --tta five-crop is torchvision's FiveCrop's mean in Python;
//  - Grad-CAM equals a reference computed in Python with hooks on the same
//    layer (within 1e-4), and a table's gradient x input Python's;
//  - bad input (a file that is not an image, a table without a feature
//    column, a run without a checkpoint, an export of another version, an
//    --out that exists) is refused with a message naming it, exit status 2,
//    and with --on-bad-file skip the other files are still predicted.
#include "test_support.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "studio/file_io.h"
#include "studio/idx_file.h"
#include "studio/image_file.h"
#include "studio/predict.h"

using namespace studio;
using test::Ran;

namespace {

constexpr int kTrain = 600, kTest = 200;
const char* kNames[] = {"T-shirt", "Trouser", "Pullover", "Dress", "Coat",
                        "Sandal",  "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

struct Fmnist {
  IdxArray images, labels;
  Image at(int i) const {
    Image img{28, 28, 1, {}};
    img.pixels.assign(images.data.begin() + i * 784, images.data.begin() + (i + 1) * 784);
    return img;
  }
};

Fmnist fmnist(const char* kind) {
  const std::string root = "/usr/share/datasets/fashion-mnist/";
  return {readIdxFile(root + kind + "-images-idx3-ubyte.gz", 3), readIdxFile(root + kind + "-labels-idx1-ubyte.gz", 1)};
}

// folder/<part>/<class name>/<i>.png (every fourth a JPEG).
void writeImages(const QString& folder, const char* part, const Fmnist& f, int n) {
  for (int i = 0; i < n; ++i) {
    const QString dir = QString("%1/%2/%3").arg(folder, part, kNames[f.labels.data[static_cast<size_t>(i)]]);
    QDir().mkpath(dir);
    const std::string path = QString("%1/%2").arg(dir).arg(i, 5, 10, QChar('0')).toStdString();
    if (i % 4 == 3)
      writeJpegFile(path + ".jpg", f.at(i), 90);
    else
      writePngFile(path + ".png", f.at(i));
  }
}

// Each image's 4x4 means of 7x7 blocks, and its class by name.
std::string tableOf(const Fmnist& f, int n) {
  std::string t;
  for (int k = 0; k < 16; ++k) t += "p" + std::to_string(k) + ",";
  t += "garment\n";
  for (int i = 0; i < n; ++i) {
    for (int by = 0; by < 4; ++by)
      for (int bx = 0; bx < 4; ++bx) {
        int sum = 0;
        for (int y = 0; y < 7; ++y)
          for (int x = 0; x < 7; ++x)
            sum += f.images.data[static_cast<size_t>(i * 784 + (by * 7 + y) * 28 + bx * 7 + x)];
        t += std::to_string(sum / 49.0) + ",";
      }
    t += std::string(kNames[f.labels.data[static_cast<size_t>(i)]]) + "\n";
  }
  return t;
}

std::vector<float> pythonProbabilities(const QString& exportDir, const QString& input, const QString& out,
                                       const QString& tta = "") {
  QStringList args{"probs", exportDir, input, out};
  if (!tta.isEmpty()) args << tta;
  const Ran ran = test::python("predict_reference.py", args);
  if (ran.code != 0) qFatal("predict_reference.py failed: %s", qPrintable(ran.output));
  std::vector<float> p;
  const auto doc = nlohmann::json::parse(test::readText(out.toStdString()));
  for (const auto& row : doc["probabilities"])
    for (const auto& v : row) p.push_back(v.get<float>());
  return p;
}

float largestDifference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e9f;
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

}  // namespace

class TestPredict : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  QString m_folder, m_run, m_export, m_tableRun, m_tableExport, m_testCsv;
  double m_testAccuracy = 0, m_tableTestAccuracy = 0;

  QString path(const QString& name) const { return m_dir.path() + "/" + name; }

  RunSummary train(TrainConfig c) {
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    if (r.status != RunStatus::completed) qFatal("the run failed: %s", r.error.c_str());
    return r;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_folder = path("photos");
    const Fmnist trainImages = fmnist("train"), testImages = fmnist("t10k");
    writeImages(m_folder, "train", trainImages, kTrain);
    writeImages(m_folder, "test", testImages, kTest);
    TrainConfig c = test::smallConfig(path("runs"));
    c.name = "images";
    c.data.format = DataFormat::image_folder;
    c.data.root = m_folder.toStdString();
    c.model.width = 8;
    c.model.depth = 2;
    c.train.epochs = 2;
    const RunSummary images = train(c);
    m_run = QString::fromStdString(images.runDir);
    m_testAccuracy = images.test.figures["eval_accuracy"];
    m_export = path("export");
    exportRun(images.runDir, m_export.toStdString(), "last");

    writeFileAtomically(path("train.csv").toStdString(), tableOf(trainImages, kTrain));
    m_testCsv = path("test.csv");
    writeFileAtomically(m_testCsv.toStdString(), tableOf(testImages, kTest));
    TrainConfig t = test::smallConfig(path("runs"));
    t.name = "table";
    t.data.format = DataFormat::csv;
    t.data.train_file = path("train.csv").toStdString();
    t.data.test_file = m_testCsv.toStdString();
    t.data.label_column = "garment";
    t.model.kind = "mlp";
    t.model.width = 32;
    t.train.epochs = 3;
    const RunSummary table = train(t);
    m_tableRun = QString::fromStdString(table.runDir);
    m_tableTestAccuracy = table.test.figures["eval_accuracy"];
    m_tableExport = path("table-export");
    exportRun(table.runDir, m_tableExport.toStdString(), "last");
  }

  void imagePredictionsAreTheExportsInPython() {
    PredictOptions o;
    o.which = WeightsChoice::last;
    o.batchSize = 64;  // several batches, the last one short
    Predictor fromRun(m_run.toStdString(), o);
    const PredictionReport r = fromRun.predict((m_folder + "/test").toStdString());
    QCOMPARE(r.rows.size(), size_t(kTest));
    QCOMPARE(r.labelled, int64_t(kTest));
    QCOMPARE(r.skipped, int64_t(0));
    QCOMPARE(r.classes.size(), size_t(10));
    // Its own test split: the run's test accuracy (a near tie may flip with
    // the summation order of another batch size: one example at most).
    qInfo("predict: accuracy %.4f; the run's test accuracy %.4f", r.accuracy(), m_testAccuracy);
    QVERIFY(std::fabs(r.accuracy() - m_testAccuracy) <= 1.0 / kTest + 1e-9);
    // The export predicts the same.
    const PredictionReport e = Predictor(m_export.toStdString()).predict((m_folder + "/test").toStdString());
    QCOMPARE(e.weights, std::string("last"));
    QVERIFY(largestDifference(e.probabilities, r.probabilities) < 1e-6f);
    // Python, on the same files in the same order.
    std::string list;
    for (const auto& row : r.rows) list += row.source + "\n";
    writeFileAtomically(path("files.txt").toStdString(), list);
    const auto want = pythonProbabilities(m_export, path("files.txt"), path("python-images.json"));
    const float d = largestDifference(r.probabilities, want);
    qInfo("largest difference from Python: %g", static_cast<double>(d));
    QVERIFY2(d <= 1e-5f, qPrintable(QString::number(static_cast<double>(d))));
    // Top-k: the most probable first, as the full rows say.
    for (const auto& row : r.rows) {
      QCOMPARE(row.top.size(), size_t(5));
      QVERIFY(row.probability[0] >= row.probability[1]);
    }
    // A file in a class folder is labelled by it.
    QCOMPARE(r.classes[static_cast<size_t>(r.rows.front().label)],
             QDir(QFileInfo(QString::fromStdString(r.rows.front().source)).path()).dirName().toStdString());
  }

  void tablePredictionsAreTheExportsInPython() {
    PredictOptions o;
    o.which = WeightsChoice::last;
    o.batchSize = 64;
    const PredictionReport r = Predictor(m_tableRun.toStdString(), o).predict(m_testCsv.toStdString());
    QCOMPARE(r.input.name(), std::string("table"));
    QCOMPARE(r.rows.size(), size_t(kTest));
    QCOMPARE(r.rows.front().source, std::string("row 2"));
    QCOMPARE(r.labelled, int64_t(kTest));
    qInfo("predict: table accuracy %.4f; the run's test accuracy %.4f", r.accuracy(), m_tableTestAccuracy);
    QVERIFY(std::fabs(r.accuracy() - m_tableTestAccuracy) <= 1.0 / kTest + 1e-9);
    const auto want = pythonProbabilities(m_tableExport, m_testCsv, path("python-table.json"));
    const float d = largestDifference(r.probabilities, want);
    QVERIFY2(d <= 1e-5f, qPrintable(QString::number(static_cast<double>(d))));
    // Gradient x input of row 5's predicted class: Python's.
    QCOMPARE(r.features.size(), size_t(kTest * 16));
    Predictor table(m_tableExport.toStdString());
    const std::vector<float> row(r.features.begin() + 5 * 16, r.features.begin() + 6 * 16);
    const FeatureAttribution a = table.attributions(row);
    QCOMPARE(a.classIndex, r.rows[5].top[0]);
    QCOMPARE(a.features.front(), std::string("p0"));
    const Ran ran =
        test::python("predict_reference.py", {"attributions", m_tableExport, m_testCsv, "5", path("attr.json")});
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    const auto attr = nlohmann::json::parse(test::readText(path("attr.json").toStdString()));
    QCOMPARE(a.classIndex, attr["class"].get<int64_t>());
    const float da = largestDifference(a.values, attr["values"].get<std::vector<float>>());
    qInfo("gradient x input: largest difference from Python %g", static_cast<double>(da));
    QVERIFY2(da <= 1e-5f, qPrintable(QString::number(static_cast<double>(da))));
    QVERIFY(std::any_of(a.values.begin(), a.values.end(), [](float v) { return std::fabs(v) > 1e-3f; }));
    QVERIFY_THROWS_EXCEPTION(InputError, Predictor(m_export.toStdString()).attributions(row));
  }

  void flipTtaIsTheMeanOfBothPasses() {
    std::vector<std::string> files, mirrored;
    QDir().mkpath(path("mirrored"));
    for (int i = 0; i < 8; ++i) {
      const std::string f = (m_folder + QString("/test/%1/").arg(kNames[0])).toStdString();
      const QStringList names = QDir(QString::fromStdString(f)).entryList(QDir::Files, QDir::Name);
      files.push_back(f + names[i].toStdString());
      Image img = decodeImageFile(files.back(), 1);
      for (int64_t y = 0; y < img.height; ++y)
        std::reverse(img.pixels.begin() + y * img.width, img.pixels.begin() + (y + 1) * img.width);
      mirrored.push_back(path("mirrored/%1.png").arg(i).toStdString());
      writePngFile(mirrored.back(), img);
    }
    PredictOptions o;
    Predictor plain(m_export.toStdString(), o);
    const auto a = plain.predictFiles(files).probabilities, b = plain.predictFiles(mirrored).probabilities;
    o.tta = TestTimeAugmentation::flip;
    const auto both = Predictor(m_export.toStdString(), o).predictFiles(files).probabilities;
    std::vector<float> mean(a.size());
    for (size_t i = 0; i < a.size(); ++i) mean[i] = (a[i] + b[i]) / 2;
    QVERIFY(largestDifference(a, b) > 1e-3f);  // the mirror does change them
    QVERIFY2(largestDifference(both, mean) <= 1e-6f,
             qPrintable(QString::number(double(largestDifference(both, mean)))));
  }

  void fiveCropIsTorchvisionsOnLargerImages() {
    // Larger photos: test images scaled to 40x36 (the model takes 28x28).
    QDir().mkpath(path("large"));
    std::string list;
    std::vector<std::string> files;
    const Fmnist testImages = fmnist("t10k");
    for (int i = 0; i < 6; ++i) {
      const Image small = testImages.at(i);
      Image big{40, 36, 1, std::vector<uint8_t>(40 * 36)};
      for (int64_t y = 0; y < 40; ++y)
        for (int64_t x = 0; x < 36; ++x)
          big.pixels[static_cast<size_t>(y * 36 + x)] =
              small.pixels[static_cast<size_t>((y * 28 / 40) * 28 + x * 28 / 36)];
      files.push_back(path("large/%1.png").arg(i).toStdString());
      writePngFile(files.back(), big);
      list += files.back() + "\n";
    }
    writeFileAtomically(path("large.txt").toStdString(), list);
    PredictOptions o;
    o.tta = TestTimeAugmentation::five_crop;
    Predictor five(m_export.toStdString(), o);
    const PredictionReport r = five.predictFiles(files);
    QCOMPARE(r.skipped, int64_t(0));
    const auto want = pythonProbabilities(m_export, path("large.txt"), path("python-five.json"), "five-crop");
    const float d = largestDifference(r.probabilities, want);
    qInfo("five-crop: largest difference from Python %g", static_cast<double>(d));
    QVERIFY2(d <= 1e-5f, qPrintable(QString::number(static_cast<double>(d))));
    // Images no larger than the input are refused, naming the file and its size.
    const std::string small =
        (m_folder + QString("/test/%1/").arg(kNames[0])).toStdString() +
        QDir(m_folder + QString("/test/%1").arg(kNames[0])).entryList(QDir::Files).front().toStdString();
    QString error;
    try {
      five.predictFiles({small});
    } catch (const InputError& e) {
      error = e.what();
    }
    QVERIFY2(error.contains(QString::fromStdString(small)) && error.contains("28x28, not larger"), qPrintable(error));
  }

  void gradCamIsPythonsWithHooks() {
    const std::string file =
        (m_folder + QString("/test/%1/").arg(kNames[9])).toStdString() +
        QDir(m_folder + QString("/test/%1").arg(kNames[9])).entryList(QDir::Files).front().toStdString();
    const GradCamMap map = Predictor(m_export.toStdString()).gradCam(file);
    QCOMPARE(map.height, int64_t(28));
    QCOMPARE(map.heat.size(), size_t(28 * 28));
    QCOMPARE(map.image.size(), size_t(28 * 28));
    const Ran ran = test::python("predict_reference.py", {"gradcam", m_export, QString::fromStdString(file),
                                                          QString::fromStdString(map.layer), path("cam.json")});
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    const auto want = nlohmann::json::parse(test::readText(path("cam.json").toStdString()));
    QCOMPARE(map.classIndex, want["class"].get<int64_t>());
    QVERIFY(std::fabs(map.probability - want["probability"].get<float>()) < 1e-5f);
    const auto heat = want["heat"].get<std::vector<float>>();
    const float d = largestDifference(map.heat, heat);
    qInfo("Grad-CAM of layer %s: largest difference from Python %g", map.layer.c_str(), static_cast<double>(d));
    QVERIFY2(d <= 1e-4f, qPrintable(QString::number(static_cast<double>(d))));
    QVERIFY(*std::max_element(map.heat.begin(), map.heat.end()) == 1.0f);
    // A table's model has no convolutional stage.
    QVERIFY_THROWS_EXCEPTION(InputError, Predictor(m_tableExport.toStdString()).gradCam(file));
  }

  void cliWritesThePredictions() {
    const QString out = path("cli.csv");
    const Ran ran = test::cli({"predict", m_export, "--input", m_folder + "/test", "--top-k", "3", "--out", out});
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    QVERIFY2(ran.output.contains("accuracy ") && ran.output.contains("confusion matrix"), qPrintable(ran.output));
    const auto lines = test::readLines(out.toStdString());
    QCOMPARE(lines.size(), size_t(kTest + 1));
    QCOMPARE(lines[0],
             std::string("source,label,class_1,probability_1,class_2,probability_2,class_3,probability_3,error"));
    // Given again, the file is not overwritten without --overwrite.
    const Ran again = test::cli({"predict", m_export, "--input", m_folder + "/test", "--out", out});
    QCOMPARE(again.code, 2);
    QVERIFY2(again.output.contains("already exists"), qPrintable(again.output));
    QCOMPARE(test::cli({"predict", m_export, "--input", m_folder + "/test", "--out", out, "--overwrite"}).code, 0);
  }

  // --out is a file of the predictions' own: never a device, a FIFO, a link
  // (even one to nothing) or the input, whatever --overwrite says; a missing
  // folder is bad input (exit 2). The writer itself never replaces a device.
  void cliOverwritesOnlyItsOwnFiles() {
    const QString fifo = path("out.fifo");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0644), 0);
    Ran ran = test::cli({"predict", m_tableExport, "--input", m_testCsv, "--out", fifo, "--overwrite"});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("is a FIFO, not a file"), qPrintable(ran.output));
    struct stat st {};
    QVERIFY(::lstat(fifo.toLocal8Bit().constData(), &st) == 0 && S_ISFIFO(st.st_mode));
    QVERIFY_THROWS_EXCEPTION(InputError, writeFileAtomically(fifo.toStdString(), "x"));
    QVERIFY(::lstat(fifo.toLocal8Bit().constData(), &st) == 0 && S_ISFIFO(st.st_mode));
    // A character device of /dev/null's numbers, made here (where mknod is allowed: root).
    const QString device = path("out.chr");
    if (::mknod(device.toLocal8Bit().constData(), S_IFCHR | 0644, makedev(1, 3)) == 0) {
      ran = test::cli({"predict", m_tableExport, "--input", m_testCsv, "--out", device, "--overwrite"});
      QCOMPARE(ran.code, 2);
      QVERIFY2(ran.output.contains("is a character device, not a file"), qPrintable(ran.output));
      QVERIFY(::lstat(device.toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode));
    } else {
      qInfo("mknod refused here (%s): the character device's case is not tried", std::strerror(errno));
    }
    const QString dangling = path("out-link.csv");
    QVERIFY(QFile::link(path("nowhere-yet.csv"), dangling));
    ran = test::cli({"predict", m_tableExport, "--input", m_testCsv, "--out", dangling});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("is a link to nothing"), qPrintable(ran.output));
    QVERIFY(QFileInfo(dangling).isSymLink() && !QFile::exists(path("nowhere-yet.csv")));
    // The input table itself, with --overwrite: refused, the table kept.
    const std::string before = test::readText(m_testCsv.toStdString());
    ran = test::cli({"predict", m_tableExport, "--input", m_testCsv, "--out", m_testCsv, "--overwrite"});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("is the input"), qPrintable(ran.output));
    QCOMPARE(test::readText(m_testCsv.toStdString()), before);
    ran = test::cli({"predict", m_tableExport, "--input", m_testCsv, "--out", path("no-such-folder/p.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("is not there"), qPrintable(ran.output));
  }

  void badInputIsNamed() {
    // A file that is not an image, among images; and a colour image for the gray model.
    const QString mixed = path("mixed");
    test::copyTree(m_folder + "/test/" + kNames[5], mixed);
    writeFileAtomically((mixed + "/notes.png").toStdString(), "these are not pixels\n");
    Image colour{28, 28, 3, std::vector<uint8_t>(28 * 28 * 3, 0)};
    for (size_t i = 0; i < colour.pixels.size(); i += 3) colour.pixels[i] = 200;
    writePngFile((mixed + "/colour.png").toStdString(), colour);
    Ran ran = test::cli({"predict", m_export, "--input", mixed, "--out", path("mixed.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("notes.png") && ran.output.contains("--on-bad-file skip"), qPrintable(ran.output));
    QVERIFY(!QFile::exists(path("mixed.csv")));
    ran = test::cli({"predict", m_export, "--input", mixed, "--on-bad-file", "skip", "--out", path("mixed.csv")});
    QVERIFY2(ran.code == 0 && ran.output.contains("skipped 1 "), qPrintable(ran.output));
    const auto lines = test::readLines(path("mixed.csv").toStdString());
    const auto files = QDir(mixed).entryList(QDir::Files).size();
    QCOMPARE(lines.size(), size_t(files + 1));
    int errors = 0;
    for (const auto& l : lines) errors += l.find("notes.png") != std::string::npos && l.back() != ',';
    QCOMPARE(errors, 1);
    QVERIFY(test::readText(path("mixed.csv").toStdString()).find("colour.png,,") != std::string::npos);

    // A table without one of the features.
    std::string table = test::readText(m_testCsv.toStdString());
    table.replace(table.find("p7,"), 3, "q7,");
    writeFileAtomically(path("renamed.csv").toStdString(), table);
    ran = test::cli({"predict", m_tableExport, "--input", path("renamed.csv"), "--out", path("renamed-out.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("no column \"p7\""), qPrintable(ran.output));
    // A value that is not a number: its row and column.
    table = test::readText(m_testCsv.toStdString());
    table.replace(table.find('\n') + 1, 1, "x");
    writeFileAtomically(path("word.csv").toStdString(), table);
    ran = test::cli({"predict", m_tableExport, "--input", path("word.csv"), "--out", path("word-out.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("row 2") && ran.output.contains("\"p0\""), qPrintable(ran.output));

    // A run without a checkpoint.
    const QString bare = path("bare-run");
    QDir().mkpath(bare);
    QFile::copy(m_run + "/settings.json", bare + "/settings.json");
    ran = test::cli({"predict", bare, "--input", mixed, "--out", path("bare.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("no checkpoint"), qPrintable(ran.output));

    // An export of another version.
    const QString other = path("other-export");
    test::copyTree(m_export, other);
    auto pre = nlohmann::json::parse(test::readText((other + "/preprocessing.json").toStdString()));
    pre["format"] = 7;
    pre["studio_version"] = "9.0";
    writeFileAtomically((other + "/preprocessing.json").toStdString(), pre.dump());
    ran = test::cli({"predict", other, "--input", mixed, "--out", path("other.csv")});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("another Training Studio version (9.0"), qPrintable(ran.output));

    // An export whose preprocessing.json was edited (another mean, size, class list, task or threshold) no
    // longer describes its model: refused by name, where before it predicted as if nothing had changed.
    const std::vector<std::pair<std::string, nlohmann::json>> edits = {{"/normalization/mean/0", 0.9},
                                                                       {"/input_shape/height", 100000},
                                                                       {"/input_shape/channels", 7},
                                                                       {"/classes/0", "renamed"},
                                                                       {"/task", "regression"}};
    for (const auto& [pointer, value] : edits) {
      const QString edited = path("edited-export");
      QDir(edited).removeRecursively();
      test::copyTree(m_export, edited);
      auto described = nlohmann::json::parse(test::readText((edited + "/preprocessing.json").toStdString()));
      described[nlohmann::json::json_pointer(pointer)] = value;
      writeFileAtomically((edited + "/preprocessing.json").toStdString(), described.dump());
      ran = test::cli({"predict", edited, "--input", mixed, "--out", path("edited.csv")});
      QCOMPARE(ran.code, 2);
      const std::string key = pointer.substr(1, pointer.find('/', 1) - 1);
      QVERIFY2(ran.output.contains(QString::fromStdString("says " + key + " ")) &&
                   ran.output.contains("an edited copy is refused"),
               qPrintable(ran.output));
    }
    writeFileAtomically((other + "/preprocessing.json").toStdString(), "[1, 2]");
    ran = test::cli({"predict", other, "--input", mixed, "--out", path("other.csv")});
    QVERIFY2(ran.code == 2 && ran.output.contains("not a JSON object"), qPrintable(ran.output));

    // Options out of range.
    QCOMPARE(test::cli({"predict", m_export, "--input", mixed, "--tta", "spin", "--out", path("o.csv")}).code, 2);
    QCOMPARE(test::cli({"predict", m_export, "--input", mixed, "--top-k", "0", "--out", path("o.csv")}).code, 2);
    ran = test::cli({"predict", m_export, "--input", path("nowhere"), "--out", path("o.csv")});
    QVERIFY2(ran.code == 2 && ran.output.contains("nowhere"), qPrintable(ran.output));
    // A classifier's run given a detector's annotations: the one flow's task refuses them, nothing written.
    ran =
        test::cli({"predict", m_export, "--input", mixed, "--annotations", path("boxes.json"), "--out", path("a.csv")});
    QVERIFY2(ran.code == 2 && ran.output.contains("is not a detection run"), qPrintable(ran.output));
    QVERIFY(!QFile::exists(path("a.csv")));
  }

  // One flow for every task (issue 57): a classifier's Predictor says its task and gives rows without boxes; a
  // detector's hooks (Grad-CAM) are refused by the task that has none.
  void oneFlowSaysItsTask() {
    Predictor p(m_export.toStdString());
    QCOMPARE(p.task(), TaskKind::classification);
    const PredictionReport r = p.predict((m_folder + "/test").toStdString());
    QCOMPARE(r.task.value(), TaskKind::classification);
    QVERIFY(!r.rows.empty());
    for (const auto& row : r.rows) QVERIFY(row.boxes.empty() && row.imageId == -1);
    QCOMPARE(r.boxesFound, int64_t(0));
    QVERIFY(!r.evaluated);
  }
};

QTEST_GUILESS_MAIN(TestPredict)
#include "test_predict.moc"
