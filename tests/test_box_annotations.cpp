// Detection's annotation readers (studio/box_annotations.h) on files written
// as COCO, YOLO (data.yaml, labels/*.txt) and Pascal VOC (XML) write them,
// by tests/reference/box_annotations_reference.py: every format gives the
// same images and the same boxes in pixels (an image without boxes kept,
// crowds marked, COCO's category ids mapped to contiguous labels and back),
// and each bad input is refused naming its file and entry; a box past its
// image is clipped or skipped when asked.
// Oracle: the boxes the script drew, written in each format by it.
#include "test_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <fstream>
#include <map>

#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "studio/box_annotations.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/log.h"
#include "studio/train_config.h"

using namespace studio;

namespace {

std::string folder() { return std::string(std::getenv("STUDIO_REFERENCE_DIR")) + "/box_annotations"; }

// One of the reference set's images, copied to `to`: its header.
ImageHeader copyAnImage(const std::string& to) {
  const QString image = QDir(QString::fromStdString(folder() + "/yolo/images/train")).entryList(QDir::Files).value(0);
  if (!QFile::copy(QString::fromStdString(folder() + "/yolo/images/train/") + image, QString::fromStdString(to)))
    throw std::runtime_error("cannot copy " + image.toStdString() + " to " + to);
  return readImageHeader(to);
}

// A detection run's settings on these images and annotations.
TrainConfig detectionConfig(const std::string& root, const std::string& annotations) {
  TrainConfig c;
  c.task.kind = TaskKind::detection;
  c.model.kind = "fasterrcnn_mobilenet_v3_large_320_fpn";
  c.data.format = DataFormat::image_folder;
  c.data.root = root;
  c.data.annotations = annotations;
  c.data.test_fraction = 0.25;
  return c;
}

nlohmann::json expected() {
  std::ifstream in(folder() + "/expected.json");
  return nlohmann::json::parse(in);
}

// Every expected box is read, in pixels (YOLO's normalised numbers within
// 1e-4 px), under its name, and nothing else.
void sameBoxes(const BoxAnnotations& a, double tolerance) {
  const nlohmann::json want = expected()["images"];
  QCOMPARE(a.images.size(), want.size());
  size_t boxes = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& w = want[i];
    const auto found = std::find_if(a.images.begin(), a.images.end(), [&](const AnnotatedImage& im) {
      return std::filesystem::path(im.file).filename() == w["file"].get<std::string>();
    });
    QVERIFY2(found != a.images.end(), w["file"].get<std::string>().c_str());
    QCOMPARE(found->width, w["width"].get<int64_t>());
    QCOMPARE(found->height, w["height"].get<int64_t>());
    const auto index = found - a.images.begin();
    std::vector<const AnnotatedBox*> mine;
    for (const auto& b : a.boxes)
      if (b.image == index) mine.push_back(&b);
    QCOMPARE(mine.size(), w["boxes"].size());
    for (size_t k = 0; k < mine.size(); ++k) {
      const auto& wb = w["boxes"][k];
      QCOMPARE(a.categories[static_cast<size_t>(mine[k]->label)].name, wb["name"].get<std::string>());
      const auto box = wb["box"].get<std::vector<double>>();
      const double got[4] = {mine[k]->x, mine[k]->y, mine[k]->w, mine[k]->h};
      for (size_t c = 0; c < 4; ++c)
        QVERIFY2(std::abs(got[c] - box[c]) <= tolerance, qPrintable(QString("%1 box %2: %3 against %4")
                                                                        .arg(w["file"].get<std::string>().c_str())
                                                                        .arg(k)
                                                                        .arg(got[c])
                                                                        .arg(box[c])));
      QCOMPARE(mine[k]->crowd, wb["crowd"].get<bool>());
    }
    boxes += mine.size();
  }
  QCOMPARE(a.boxes.size(), boxes);
}

}  // namespace

class TestBoxAnnotations : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void coco() {
    const BoxAnnotations a = readBoxAnnotations(folder() + "/coco.json", folder() + "/images", "auto", BadBoxes::fail);
    QCOMPARE(a.format, std::string("coco"));
    sameBoxes(a, 0);
    // Category ids 3, 7, 11 are labels 0, 1, 2 (sorted by id), names kept.
    QCOMPARE(a.categories.size(), size_t{3});
    // The expected file kept for the loop: a range over a temporary's member
    // outlives the temporary (ASan: heap-use-after-free).
    const nlohmann::json want = expected();
    for (const auto& [name, id] : want["coco_ids"].items()) {
      const auto c =
          std::find_if(a.categories.begin(), a.categories.end(), [&](const BoxCategory& x) { return x.name == name; });
      QVERIFY(c != a.categories.end());
      QCOMPARE(c->id, id.get<int64_t>());
    }
    QVERIFY(std::is_sorted(a.categories.begin(), a.categories.end(),
                           [](const auto& x, const auto& y) { return x.id < y.id; }));
    QCOMPARE(a.images.front().id, int64_t{100});  // COCO's image ids kept for its results format
    QVERIFY(std::abs(a.boxes.front().area - 0.8 * a.boxes.front().w * a.boxes.front().h) < 1e-9);  // the file's area
  }

  void yolo() {
    const BoxAnnotations a =
        readBoxAnnotations(folder() + "/yolo/data.yaml", folder() + "/yolo/images", "auto", BadBoxes::fail);
    QCOMPARE(a.format, std::string("yolo"));
    std::vector<std::string> names;
    for (const auto& c : a.categories) names.push_back(c.name);
    QCOMPARE(names, expected()["names"].get<std::vector<std::string>>());  // data.yaml's index order
    // The same boxes in pixels from the normalised numbers; YOLO has no
    // crowds, so the crowd box is an ordinary one there.
    auto want = expected();
    QCOMPARE(a.images.size(), want["images"].size());
    size_t boxes = 0;
    for (const auto& w : want["images"]) {
      const auto found = std::find_if(a.images.begin(), a.images.end(), [&](const AnnotatedImage& im) {
        return std::filesystem::path(im.file).filename() == w["file"].get<std::string>();
      });
      QVERIFY(found != a.images.end());
      const auto index = found - a.images.begin();
      size_t k = 0;
      for (const auto& b : a.boxes) {
        if (b.image != index) continue;
        const auto box = w["boxes"][k]["box"].get<std::vector<double>>();
        QVERIFY(std::abs(b.x - box[0]) < 1e-4 && std::abs(b.y - box[1]) < 1e-4);
        QVERIFY(std::abs(b.w - box[2]) < 1e-4 && std::abs(b.h - box[3]) < 1e-4);
        QCOMPARE(a.categories[static_cast<size_t>(b.label)].name, w["boxes"][k]["name"].get<std::string>());
        QVERIFY(!b.crowd);
        ++k;
      }
      QCOMPARE(k, w["boxes"].size());
      boxes += k;
    }
    QCOMPARE(a.boxes.size(), boxes);
  }

  void voc() {
    const BoxAnnotations a = readBoxAnnotations(folder() + "/voc", folder() + "/images", "auto", BadBoxes::fail);
    QCOMPARE(a.format, std::string("voc"));
    sameBoxes(a, 0);  // VOC's 1-based pixels back to 0-based
    std::vector<std::string> names;
    for (const auto& c : a.categories) names.push_back(c.name);
    QCOMPARE(names, expected()["names"].get<std::vector<std::string>>());  // sorted by name
  }

  // VOC's corners are 1-based pixel indices, inclusive: <xmin>1</xmin> to
  // <xmax>W</xmax> is the whole image, 0 to W in coordinates, as Detectron2
  // reads them (detectron2/data/datasets/pascal_voc.py, load_voc_instances:
  // "a box with annotation (xmin=1, xmax=W) covers the whole image ... (xmin=0,
  // xmax=W)"). The studio once read xmax - 1 (issue 60, item 8).
  void vocCornersAreDetectron2s() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const ImageHeader h = copyAnImage(dir + "/a.png");
    QDir().mkpath(QString::fromStdString(dir + "/voc"));
    std::ofstream(dir + "/voc/a.xml") << "<annotation><filename>a.png</filename><size><width>" << h.width
                                      << "</width><height>" << h.height
                                      << "</height></size><object><name>all</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
                                      << "<xmax>" << h.width << "</xmax><ymax>" << h.height
                                      << "</ymax></bndbox></object></annotation>";
    const BoxAnnotations a = readBoxAnnotations(dir + "/voc", dir, "voc", BadBoxes::fail);
    QCOMPARE(a.boxes.size(), size_t(1));
    const AnnotatedBox& b = a.boxes[0];
    QCOMPARE(std::vector<double>({b.x, b.y, b.w, b.h}),
             std::vector<double>({0.0, 0.0, double(h.width), double(h.height)}));
  }

  // Issue 59, item 15: a JSON file read as VOC gave a raw "directory
  // iterator" error; an image named by two VOC files was counted twice; VOC
  // files in sub-folders were ignored without a word.
  void vocFolderMistakesAreNamed() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const ImageHeader h = copyAnImage(dir + "/a.png");
    const auto voc = [&](const std::string& path) {
      std::ofstream(path) << "<annotation><filename>a.png</filename><size><width>" << h.width << "</width><height>"
                          << h.height << "</height></size><object><name>one</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
                          << "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>";
    };
    const auto said = [&](const std::string& annotations) {
      try {
        readBoxAnnotations(annotations, dir, "voc", BadBoxes::fail);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string("read without an error");
    };
    std::ofstream(dir + "/instances.json") << "{}";
    std::string got = said(dir + "/instances.json");
    QVERIFY2(got.find("is not a folder: data.annotation_format voc reads a folder") != std::string::npos, got.c_str());
    QDir().mkpath(QString::fromStdString(dir + "/voc/more"));
    voc(dir + "/voc/more/a.xml");
    got = said(dir + "/voc");
    QVERIFY2(got.find("holds no .xml files") != std::string::npos &&
                 got.find("1 .xml file(s) in its sub-folders, which are not read") != std::string::npos,
             got.c_str());
    voc(dir + "/voc/a.xml");
    QCOMPARE(readBoxAnnotations(dir + "/voc", dir, "voc", BadBoxes::fail).images.size(), size_t(1));
    voc(dir + "/voc/b.xml");
    got = said(dir + "/voc");
    QVERIFY2(
        got.find("b.xml and ") != std::string::npos && got.find("a.xml both annotate the image") != std::string::npos,
        got.c_str());
  }

  void badInputIsNamed() {
    const auto cases = expected()["bad"];
    QVERIFY(cases.size() >= 8);
    for (const auto& c : cases) {
      const std::string file = folder() + "/bad/" + c["file"].get<std::string>();
      const std::string root = folder() + (c.contains("root") ? "/bad/" + c["root"].get<std::string>() : "/images");
      try {
        readBoxAnnotations(file, root, c["format"].get<std::string>(), BadBoxes::fail);
        QFAIL(qPrintable(QString::fromStdString(file + " was read without an error")));
      } catch (const DataError& e) {
        const std::string text = e.what();
        // The file at fault (a YOLO dataset's label file, not its data.yaml).
        QVERIFY2(text.find(folder() + "/bad/" + c["names"].get<std::string>()) != std::string::npos, text.c_str());
        for (const auto& w : c["words"])
          QVERIFY2(text.find(w.get<std::string>()) != std::string::npos,
                   qPrintable(QString::fromStdString("\"" + w.get<std::string>() + "\" not in: " + text)));
      }
    }
  }

  // data.on_bad_box: clip keeps the box inside its image, skip drops it.
  void clipOrSkip() {
    const std::string file = folder() + "/bad/past_the_image.json";
    const BoxAnnotations clipped = readBoxAnnotations(file, folder() + "/images", "coco", BadBoxes::clip);
    QCOMPARE(clipped.clipped, int64_t{1});
    const AnnotatedBox& b = clipped.boxes.front();
    const AnnotatedImage& im = clipped.images[static_cast<size_t>(b.image)];
    QCOMPARE(b.x + b.w, static_cast<double>(im.width));
    QCOMPARE(b.w, 5.0);
    const BoxAnnotations skipped = readBoxAnnotations(file, folder() + "/images", "coco", BadBoxes::skip);
    QCOMPARE(skipped.skipped, int64_t{1});
    QCOMPARE(skipped.boxes.size() + 1, clipped.boxes.size());
  }

  // A data.yaml that is a scalar, or whose names are not names: yaml-cpp's
  // own exceptions escaped before (fuzz_box_annotations' first find).
  void yoloNamesOfAnotherShape() {
    const std::string dir = QDir::tempPath().toStdString() + "/test_box_annotations-yaml";
    // QDir, not std::filesystem: libtorch.so, linked here, exports its own
    // std::filesystem::remove_all, which the dynamic linker picked and which crashed.
    QDir().mkpath(QString::fromStdString(dir + "/images"));
    for (const std::string& text : {std::string("z"), std::string("names: [a, [b, c]]\n"),
                                    std::string("names:\n  x: bolt\n"), std::string("- 1\n- 2\n")}) {
      std::ofstream(dir + "/data.yaml") << text;
      try {
        readBoxAnnotations(dir + "/data.yaml", dir + "/images", "yolo", BadBoxes::fail);
        QFAIL(("accepted: " + text).c_str());
      } catch (const DataError& e) {
        QVERIFY2(std::string(e.what()).find(dir + "/data.yaml") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find("names") != std::string::npos, e.what());
      }
    }
    QDir(QString::fromStdString(dir)).removeRecursively();
  }

  // Issue 59, items 2 and 4: a data.yaml, a YOLO label file or a VOC file
  // that is a FIFO hung `summary`, `train` and `predict --annotations` for
  // ever, or counted as an image without boxes; a label file that is a
  // folder did too. Each is refused at once, by name. So is a FIFO settings file.
  void aFifoOrAFolderIsRefusedAtOnce() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    QDir().mkpath(QString::fromStdString(dir + "/images"));
    QDir().mkpath(QString::fromStdString(dir + "/labels"));
    const QString image = QDir(QString::fromStdString(folder() + "/yolo/images/train")).entryList(QDir::Files).value(0);
    QVERIFY(!image.isEmpty());
    QVERIFY(QFile::copy(QString::fromStdString(folder() + "/yolo/images/train/") + image,
                        QString::fromStdString(dir + "/images/") + image));
    const std::string label = dir + "/labels/" + QFileInfo(image).completeBaseName().toStdString() + ".txt";
    const auto refused = [&](const std::string& file, const std::string& format, const std::string& named,
                             const char* what) {
      try {
        readBoxAnnotations(file, dir + "/images", format, BadBoxes::fail);
        QFAIL(("read without an error: " + named).c_str());
      } catch (const DataError& e) {
        QVERIFY2(std::string(e.what()).find(named) != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find(what) != std::string::npos, e.what());
      }
    };
    QCOMPARE(::mkfifo((dir + "/data.yaml").c_str(), 0644), 0);
    refused(dir + "/data.yaml", "yolo", dir + "/data.yaml", "a FIFO");
    QVERIFY(QFile::remove(QString::fromStdString(dir + "/data.yaml")));
    std::ofstream(dir + "/data.yaml") << "names: [a, b]\n";
    QCOMPARE(readBoxAnnotations(dir + "/data.yaml", dir + "/images", "yolo", BadBoxes::fail).images.size(), size_t(1));
    QCOMPARE(::mkfifo(label.c_str(), 0644), 0);
    refused(dir + "/data.yaml", "yolo", label, "a FIFO");
    QVERIFY(QFile::remove(QString::fromStdString(label)));
    QVERIFY(QDir().mkpath(QString::fromStdString(label)));
    refused(dir + "/data.yaml", "yolo", label, "a folder");

    QDir().mkpath(QString::fromStdString(dir + "/voc"));
    QCOMPARE(::mkfifo((dir + "/voc/one.xml").c_str(), 0644), 0);
    refused(dir + "/voc", "voc", dir + "/voc/one.xml", "a FIFO");

    QCOMPARE(::mkfifo((dir + "/settings.json").c_str(), 0644), 0);
    try {
      loadConfigFile(dir + "/settings.json");
      QFAIL("a FIFO read as settings");
    } catch (const ConfigFileError& e) {
      QVERIFY2(std::string(e.what()).find("settings file " + dir + "/settings.json is not a regular file (a FIFO)") !=
                   std::string::npos,
               e.what());
    }
  }

  // Issue 59, item 3: a detector's training split without a box (COCO's
  // "annotations": [], every box a crowd, YOLO without label files) trained
  // to a test mAP of -1 and exit 0; it is refused, saying why.
  void aTrainingSplitWithoutBoxesIsRefused() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const QString image = QDir(QString::fromStdString(folder() + "/yolo/images/train")).entryList(QDir::Files).value(0);
    QVERIFY(!image.isEmpty());
    nlohmann::json coco = {{"images", nlohmann::json::array()},
                           {"annotations", nlohmann::json::array()},
                           {"categories", {{{"id", 1}, {"name", "thing"}}}}};
    for (int i = 0; i < 8; ++i) {
      const std::string name = "im" + std::to_string(i) + ".png";
      QVERIFY(QFile::copy(QString::fromStdString(folder() + "/yolo/images/train/") + image,
                          QString::fromStdString(dir + "/" + name)));
      coco["images"].push_back({{"id", i + 1}, {"file_name", name}, {"width", 0}, {"height", 0}});
    }
    const auto refusal = [&](const nlohmann::json& file, double warnPast = 0.5) {
      std::ofstream(dir + "/instances.json") << file.dump();
      TrainConfig c = detectionConfig(dir, dir + "/instances.json");
      c.data.warn_images_without_boxes = warnPast;
      try {
        planData(c);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    // Width and height as the images' own (the reader checks them).
    const ImageHeader h = readImageHeader(dir + "/im0.png");
    for (auto& im : coco["images"]) {
      im["width"] = h.width;
      im["height"] = h.height;
    }
    std::string said = refusal(coco);
    QVERIFY2(said.find("the 6 training images have no box to learn from: the file gives no box for them") !=
                 std::string::npos,
             said.c_str());
    for (int i = 0; i < 8; ++i)
      coco["annotations"].push_back(
          {{"id", i + 1}, {"image_id", i + 1}, {"category_id", 1}, {"bbox", {2, 2, 10, 10}}, {"iscrowd", 1}});
    said = refusal(coco);
    QVERIFY2(said.find("its 6 boxes are all crowds (iscrowd 1)") != std::string::npos, said.c_str());
    coco["annotations"][0]["iscrowd"] = 0;
    coco["annotations"][1]["iscrowd"] = 0;
    coco["annotations"][2]["iscrowd"] = 0;
    // Boxes in training: it plans, and a split that is mostly images without
    // a box is said with its counts (issue 59, item 3: not a word before),
    // unless data.warn_images_without_boxes allows that share.
    std::ostringstream logged;
    const auto kept = log::addSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(logged));
    QCOMPARE(refusal(coco), std::string());
    const std::string warned = logged.str();
    QVERIFY2(warned.find(" training images (") != std::string::npos &&
                 warned.find("have no box, more than data.warn_images_without_boxes (50%)") != std::string::npos,
             warned.c_str());
    logged.str("");
    QCOMPARE(refusal(coco, 1.0), std::string());
    QVERIFY2(logged.str().find("have no box") == std::string::npos, logged.str().c_str());
    for (auto& a : coco["annotations"]) a["iscrowd"] = 0;
    QCOMPARE(refusal(coco), std::string());
    QVERIFY2(logged.str().find("have no box") == std::string::npos, logged.str().c_str());
  }

  // Issue 59, items 10 and 11: a COCO file's wrong types were raw JSON
  // errors ("[json.exception.type_error.302] ..."), a syntax error said only
  // "is not a COCO instances file", non-integer ids and sizes were
  // truncated, and VOC's <xmax>0x50</xmax> was read as hex 80. Each is named:
  // the file, the entry, the field (and for syntax, the line and column).
  void wrongTypesAndNumbersAreNamed() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const ImageHeader h = copyAnImage(dir + "/a.png");
    const nlohmann::json good = {
        {"images", {{{"id", 100}, {"file_name", "a.png"}, {"width", h.width}, {"height", h.height}}}},
        {"annotations", {{{"id", 1}, {"image_id", 100}, {"category_id", 5}, {"bbox", {1, 1, 4, 4}}, {"iscrowd", 0}}}},
        {"categories", {{{"id", 5}, {"name", "five"}}}}};
    const auto said = [&](const std::string& text) {
      std::ofstream(dir + "/coco.json") << text;
      try {
        readBoxAnnotations(dir + "/coco.json", dir, "coco", BadBoxes::fail);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string("read without an error");
    };
    std::ofstream(dir + "/ok.json") << good.dump();
    QCOMPARE(readBoxAnnotations(dir + "/ok.json", dir, "coco", BadBoxes::fail).boxes.size(), size_t(1));
    const auto changed = [&](const char* pointer, const nlohmann::json& value) {
      nlohmann::json j = good;
      j[nlohmann::json::json_pointer(pointer)] = value;
      return said(j.dump());
    };
    const std::vector<std::pair<std::string, std::string>> cases{
        {changed("/annotations/0/image_id", "100"),
         "annotations[0] (id 1): \"image_id\" is \"100\", not a whole number"},
        {changed("/annotations/0/image_id", 100.9), "\"image_id\" is 100.9, not a whole number"},
        {changed("/annotations/0/category_id", "5"), "\"category_id\" is \"5\", not a whole number"},
        {changed("/images/0/width", 128.9), "images[0]: \"width\" is 128.9; give the image's width in pixels, a whole"},
        {changed("/images/0/width", 1e300), "images[0]: \"width\" is 1e+300; give"},  // was -9223372036854775808
        {changed("/images/0/height", 0), "images[0]: \"height\" is 0; give"},
        {changed("/images/0/height", "64"), "images[0]: \"height\" is \"64\"; give"},
        {said("{\"images\": [], \"images\": [], \"annotations\": [], \"categories\": []}"), "gives \"images\" twice"},
        {changed("/categories/0/name", 5), "categories[0]: \"name\" is 5, not text"},
        {changed("/annotations/0/iscrowd", "yes"), "\"iscrowd\" is \"yes\"; give 0 or 1"},
        {changed("/images", {{"id", 100}}), "\"images\" must be a list (it is object)"},
        {said("{\"images\": [\n  {\"id\": NaN}]}"), "is not valid JSON at line 2, column 10"},
        {said(good.dump().substr(0, 30)), "is not valid JSON at line 1"},
        {said("{\"images\": [{\"id\": 1e400}]}"), "beyond the range of a double (number overflow parsing '1e400')"}};
    for (const auto& [got, want] : cases) {
      QVERIFY2(got.find(want) != std::string::npos, (want + " not in: " + got).c_str());
      QVERIFY2(got.find("json.exception") == std::string::npos, got.c_str());
    }
    QCOMPARE(changed("/annotations/0/image_id", 100.0), std::string("read without an error"));  // a whole float

    QDir().mkpath(QString::fromStdString(dir + "/voc"));
    std::ofstream(dir + "/voc/a.xml")
        << "<annotation><filename>a.png</filename><size><width>" << h.width << "</width><height>" << h.height
        << "</height></size><object><name>five</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>0x5</xmax>"
           "<ymax>5</ymax></bndbox></object></annotation>";
    try {
      readBoxAnnotations(dir + "/voc", dir, "voc", BadBoxes::fail);
      QFAIL("0x5 was read as a number");
    } catch (const DataError& e) {
      QVERIFY2(std::string(e.what()).find("<xmax> is not a number (\"0x5\"; give it in decimal)") != std::string::npos,
               e.what());
    }
    for (const char* width : {"1e300", "64.5"}) {  // 1e300 was printed as -9223372036854775808 x 64
      std::ofstream(dir + "/voc/a.xml") << "<annotation><filename>a.png</filename><size><width>" << width
                                        << "</width><height>64</height></size></annotation>";
      try {
        readBoxAnnotations(dir + "/voc", dir, "voc", BadBoxes::fail);
        QFAIL("a width that is no image's was read");
      } catch (const DataError& e) {
        QVERIFY2(std::string(e.what()).find("a.xml <size>: \"width\" is " + std::string(width) +
                                            "; give the image's width in pixels") != std::string::npos,
                 e.what());
      }
    }
  }

  // Issue 59 item 5, issue 60 item 9: data.yaml's train:, val: and test:
  // were ignored (every image under data.root pooled, the splits drawn
  // anew). They are the splits; a data.yaml that gives them wrongly is named.
  void yoloSplitsAreHonoured() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const std::map<std::string, std::vector<std::string>> layout{
        {"train", {"a", "b", "c", "d"}}, {"val", {"e"}}, {"test", {"f", "g"}}};
    for (const auto& [split, names] : layout) {
      QDir().mkpath(QString::fromStdString(dir + "/images/" + split));
      QDir().mkpath(QString::fromStdString(dir + "/labels/" + split));
      for (const auto& n : names) {
        copyAnImage(dir + "/images/" + split + "/" + n + ".png");
        std::ofstream(dir + "/labels/" + split + "/" + n + ".txt") << "0 0.5 0.5 0.25 0.25\n";
      }
    }
    const auto plan = [&](const std::string& yaml) {
      std::ofstream(dir + "/data.yaml") << yaml << "names: [thing, other]\n";
      TrainConfig c = detectionConfig(dir, dir + "/data.yaml");
      c.data.val_fraction = 0.25;
      return planData(c);
    };
    const auto names = [](const DataPlan& p, const PlannedSplit& s) {
      std::vector<std::string> out;
      for (int64_t item : s.items)
        out.push_back(std::filesystem::path(p.files[static_cast<size_t>(item)]).stem().string());
      std::sort(out.begin(), out.end());
      return out;
    };
    const auto sameSplits = [&](const DataPlan& p) {
      QCOMPARE(names(p, p.train), layout.at("train"));
      QCOMPARE(names(p, p.val), layout.at("val"));
      QCOMPARE(names(p, p.test), layout.at("test"));
    };
    DataPlan p = plan("path: .\ntrain: images/train\nval: images/val\ntest: images/test\n");
    sameSplits(p);
    QVERIFY2(p.testFrom.find("data.yaml's test: images/test (data.test_fraction is not used)") != std::string::npos,
             p.testFrom.c_str());
    QVERIFY2(p.valFrom.find("data.yaml's val: images/val (data.val_fraction is not used)") != std::string::npos,
             p.valFrom.c_str());
    // Roboflow's "../" form, a list, and a .txt list of images.
    std::ofstream(dir + "/test.txt") << "./images/test/f.png\nimages/test/g.png\n\n";
    sameSplits(plan("train: [images/train]\nval: ../images/val\ntest: test.txt\n"));
    // coco128's val: is its train:: validation is held out of it, and said.
    p = plan("train: images/train\nval: images/train\ntest: images/test\n");
    QCOMPARE(p.train.size() + p.val.size(), int64_t{4});
    QVERIFY2(p.valFrom.find("val: is train:'s images") != std::string::npos, p.valFrom.c_str());

    const auto refusal = [&](const std::string& yaml) {
      try {
        plan(yaml);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string("planned without an error");
    };
    const std::vector<std::pair<std::string, std::string>> cases{
        {refusal("train: images/train\nval: images\n"),
         "is in " + dir + "/data.yaml's train: and its val:, so it would be tested on what it trained on"},
        {refusal("train: images/train\nval: nowhere\n"),
         "data.yaml's val: \"nowhere\" is neither a folder nor a list of images"},
        {refusal("train: images/train\ntest: " + tmp.path().toStdString() + "/..\n"), "outside data.root " + dir},
        {refusal("train: images/train\nval: labels/val\n"), "data.yaml's val: \"labels/val\" holds no image"},
        {refusal("val: images/val\n"), "gives val: or test: but no train:"}};
    for (const auto& [got, want] : cases)
      QVERIFY2(got.find(want) != std::string::npos, (want + " not in: " + got).c_str());
  }

  // Issue 59, item 14: a COCO or VOC file name with ../ or an absolute
  // path, and a YOLO image or label file that is a link, read a file
  // outside the images' folder; a YOLO line's error quoted the line (a
  // linked file's first line). Each is refused, and no content is quoted.
  void pathsStayUnderTheImagesFolder() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    QDir().mkpath(QString::fromStdString(dir + "/root/images"));
    QDir().mkpath(QString::fromStdString(dir + "/root/labels"));
    const ImageHeader h = copyAnImage(dir + "/outside.png");
    copyAnImage(dir + "/root/images/a.png");
    std::ofstream(dir + "/secret.txt") << "0 SECRET-CONTENT 0.5 0.1 0.1\n";
    const auto said = [&](const std::string& file, const std::string& root, const char* format) {
      try {
        readBoxAnnotations(file, root, format, BadBoxes::fail);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string("read without an error");
    };
    const auto coco = [&](const std::string& name) {
      const nlohmann::json j = {
          {"images", {{{"id", 1}, {"file_name", name}, {"width", h.width}, {"height", h.height}}}},
          {"annotations", nlohmann::json::array()},
          {"categories", {{{"id", 1}, {"name", "thing"}}}}};
      std::ofstream(dir + "/coco.json") << j.dump();
      return said(dir + "/coco.json", dir + "/root/images", "coco");
    };
    QCOMPARE(coco("a.png"), std::string("read without an error"));
    for (const std::string& name : {std::string("../../outside.png"), dir + "/outside.png"}) {
      const std::string got = coco(name);
      QVERIFY2(
          got.find("images[0]: " + dir + "/root/images/../../outside.png is outside") != std::string::npos ||
              got.find("images[0]: " + dir + "/outside.png is outside " + dir + "/root/images") != std::string::npos,
          got.c_str());
    }
    QDir().mkpath(QString::fromStdString(dir + "/voc"));
    std::ofstream(dir + "/voc/a.xml") << "<annotation><filename>../../outside.png</filename></annotation>";
    QVERIFY2(said(dir + "/voc", dir + "/root/images", "voc").find("is outside") != std::string::npos,
             said(dir + "/voc", dir + "/root/images", "voc").c_str());

    std::ofstream(dir + "/root/data.yaml") << "names: [thing]\n";
    QCOMPARE(said(dir + "/root/data.yaml", dir + "/root/images", "yolo"), std::string("read without an error"));
    QCOMPARE(::symlink((dir + "/secret.txt").c_str(), (dir + "/root/labels/a.txt").c_str()), 0);
    std::string got = said(dir + "/root/data.yaml", dir + "/root/images", "yolo");
    QVERIFY2(got.find(dir + "/root/labels/a.txt is outside") != std::string::npos, got.c_str());
    QVERIFY2(got.find("SECRET") == std::string::npos, got.c_str());
    QVERIFY(QFile::remove(QString::fromStdString(dir + "/root/labels/a.txt")));
    std::ofstream(dir + "/root/labels/a.txt") << "0 SECRET-CONTENT 0.5 0.1 0.1\n";
    got = said(dir + "/root/data.yaml", dir + "/root/images", "yolo");
    QVERIFY2(got.find("line 1 is not \"class cx cy w h\"") != std::string::npos, got.c_str());
    QVERIFY2(got.find("value 2 is not a number") != std::string::npos, got.c_str());
    QVERIFY2(got.find("SECRET") == std::string::npos, got.c_str());
    QVERIFY(QFile::remove(QString::fromStdString(dir + "/root/labels/a.txt")));
    QCOMPARE(::symlink((dir + "/outside.png").c_str(), (dir + "/root/images/b.png").c_str()), 0);
    got = said(dir + "/root/data.yaml", dir + "/root/images", "yolo");
    QVERIFY2(got.find(dir + "/root/images/b.png is outside") != std::string::npos, got.c_str());
  }

  // Issue 59, item 15: data.root a link that leads to itself gave the
  // library's "filesystem error: recursive directory iterator ...", exit 1.
  void aLinkLoopIsNamed() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    QCOMPARE(::symlink((dir + "/b").c_str(), (dir + "/a").c_str()), 0);
    QCOMPARE(::symlink((dir + "/a").c_str(), (dir + "/b").c_str()), 0);
    std::ofstream(dir + "/data.yaml") << "names: [thing]\n";
    const TrainConfig c = detectionConfig(dir + "/a", dir + "/data.yaml");
    try {
      planData(c);
      QFAIL("planned a link loop");
    } catch (const DataError& e) {
      QVERIFY2(std::string(e.what()).find(dir + "/a cannot be read: Too many levels of symbolic links (a link that "
                                                "leads back to itself)") != std::string::npos,
               e.what());
    }
  }

  // Issue 59, item 6: a YOLO label file of 3 million boxes passed `summary`
  // and failed in training at 3.5 GB with a raw allocator error. An image's
  // boxes past 100,000 are refused when the data is planned, by name.
  void anImageWithTooManyBoxesIsRefused() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    QDir().mkpath(QString::fromStdString(dir + "/images"));
    QDir().mkpath(QString::fromStdString(dir + "/labels"));
    for (const char* n : {"a", "b", "c", "d"}) {
      copyAnImage(dir + "/images/" + n + ".png");
      std::ofstream(dir + "/labels/" + n + ".txt") << "0 0.5 0.5 0.25 0.25\n";
    }
    std::ofstream(dir + "/data.yaml") << "names: [thing]\n";
    const TrainConfig c = detectionConfig(dir + "/images", dir + "/data.yaml");
    QCOMPARE(planData(c).boxes.boxes.size(), size_t(4));
    {
      std::ofstream many(dir + "/labels/c.txt");
      for (int i = 0; i <= 100000; ++i) many << "0 0.5 0.5 0.25 0.25\n";
    }
    try {
      planData(c);
      QFAIL("100,001 boxes in one image planned");
    } catch (const DataError& e) {
      QVERIFY2(std::string(e.what()).find(dir + "/images/c.png has more than 100000 boxes in " + dir + "/data.yaml") !=
                   std::string::npos,
               e.what());
    }
    // COCO and VOC too, each refused as it is read (a VOC file's <object>s
    // before its tree is built: 144 MB of them took 2.4 GB).
    {
      nlohmann::json coco = {{"images", {{{"id", 1}, {"file_name", "images/a.png"}}}}, {"categories", {{{"id", 1}}}}};
      coco["annotations"] = nlohmann::json::array();
      for (int i = 0; i <= 100000; ++i)
        coco["annotations"].push_back({{"image_id", 1}, {"category_id", 1}, {"bbox", {1, 1, 2, 2}}});
      std::ofstream(dir + "/coco.json") << coco.dump();
      QDir().mkpath(QString::fromStdString(dir + "/voc"));
      std::ofstream voc(dir + "/voc/a.xml");
      voc << "<annotation><filename>images/a.png</filename>";
      for (int i = 0; i <= 100000; ++i) voc << "<object><name>thing</name></object>";
      voc << "</annotation>";
    }
    for (const auto& [annotations, said] :
         {std::pair{dir + "/coco.json", dir + "/images/a.png has more than 100000 boxes in " + dir + "/coco.json"},
          std::pair{dir + "/voc", dir + "/voc/a.xml holds more than 100000 <object>s"}}) {
      try {
        readBoxAnnotations(annotations, dir, "auto", BadBoxes::fail);
        QFAIL("100,001 boxes in one image read");
      } catch (const DataError& e) {
        QVERIFY2(std::string(e.what()).find(said) != std::string::npos, e.what());
      }
    }
  }

  void unknownFormat() {
    try {
      readBoxAnnotations(folder() + "/expected.json.txt", folder(), "auto", BadBoxes::fail);
      QFAIL("a .txt file was taken for annotations");
    } catch (const DataError& e) {
      QVERIFY(std::string(e.what()).find("is none of the formats") != std::string::npos);
    }
  }
};

QTEST_GUILESS_MAIN(TestBoxAnnotations)
#include "test_box_annotations.moc"
