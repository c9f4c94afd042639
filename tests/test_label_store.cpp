// The labels file a person edits (studio/label_store.h, issue 62, item 2:
// nothing is lost): changes durable when set() returns, replayed from the
// journal after a kill -9 in the middle of a burst of edits, folded into the
// CSV by compact(); a second editor of the same file refused; the file
// changed by another program merged, never written over; a bad file refused
// with its row named.
#include "test_support.h"

#include <QTemporaryDir>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "studio/box_annotations.h"
#include "studio/box_label_store.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/label_export.h"
#include "studio/label_store.h"

using namespace studio;

namespace {

QString refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

// root/name for each name: 30 x 20 grey PNG files.
void writeImages(const std::string& root, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + name).parent_path());
    Image img;
    img.height = 20;
    img.width = 30;
    img.channels = 3;
    img.pixels.assign(20 * 30 * 3, 90);
    writePngFile(root + "/" + name, img);
  }
}

// kill -9 in the middle of a burst of edits: a child opens a Store on path
// and makes edit(store, 0), edit(store, 1), ..., saying on a pipe after each
// has returned; it is killed after the 60th. Returns the last edit it
// acknowledged (every one of them must be there when the file is opened
// again, and at most the one in flight besides).
template <class Store, class Edit>
int killedDuringBurst(const std::string& path, Edit edit) {
  int pipe[2];
  if (::pipe(pipe) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe[0]);
    Store s(path);
    for (int i = 0;; ++i) {
      edit(s, i);
      if (::write(pipe[1], &i, sizeof i) != sizeof i) ::_exit(3);
    }
  }
  ::close(pipe[1]);
  int acknowledged = -1, i = 0;
  while (acknowledged < 60 && ::read(pipe[0], &i, sizeof i) == sizeof i) acknowledged = i;
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  // The acknowledgements the child wrote before it died, still in the pipe.
  while (::read(pipe[0], &i, sizeof i) == sizeof i) acknowledged = i;
  ::close(pipe[0]);
  return WIFSIGNALED(status) ? acknowledged : -1;
}

}  // namespace

class TestLabelStore : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void changesReachTheFileAndSurviveAReopen() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    {
      LabelStore s(path);
      s.set("a.png", "cat");
      s.set("b,1.png", "dog", "accepted");
      s.set("c.png", "cat");
      s.clear("c.png");
      s.set("a.png", "dog", "corrected");
      QCOMPARE(s.pendingChanges(), int64_t(5));
      QCOMPARE(s.compact(), std::string());
      QCOMPARE(s.pendingChanges(), int64_t(0));
    }
    QCOMPARE(readFileBytes(path, "labels"),
             std::string("file,label,made_by\na.png,dog,corrected\n\"b,1.png\",dog,accepted\n"));
    QCOMPARE(readFileBytes(path + ".journal", "journal"), std::string());
    LabelStore again(path);
    QCOMPARE(again.labels().size(), size_t(2));
    QCOMPARE(again.labelOf("b,1.png")->madeBy, std::string("accepted"));
    QVERIFY(!again.labelOf("c.png"));
  }

  // kill -9 in the middle of a burst of edits: every change whose set() had
  // returned (the child says so on a pipe after it) is there when the file
  // is opened again, and at most the one in flight besides.
  void aKillDuringABurstLosesNothingThatWasSet() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    const int acknowledged = killedDuringBurst<LabelStore>(
        path, [](LabelStore& s, int i) { s.set("image-" + std::to_string(i) + ".png", i % 2 ? "cat" : "dog"); });
    QVERIFY(acknowledged >= 60);
    LabelStore s(path);  // the dead child's lock went with it
    for (int k = 0; k <= acknowledged; ++k)
      QCOMPARE(s.labelOf("image-" + std::to_string(k) + ".png")->label, std::string(k % 2 ? "cat" : "dog"));
    QVERIFY(s.labels().size() <= static_cast<size_t>(acknowledged) + 2);
    s.compact();
    QVERIFY(readFileBytes(path, "labels").find("image-" + std::to_string(acknowledged) + ".png,") != std::string::npos);
  }

  // The same for boxes: every image's boxes set before the kill are there.
  void aKillDuringABurstOfBoxesLosesNothingThatWasSet() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("boxes.json").toStdString();
    const int acknowledged = killedDuringBurst<BoxLabelStore>(path, [](BoxLabelStore& s, int i) {
      if (i == 0) s.addCategory("cat");
      s.setBoxes("image-" + std::to_string(i) + ".png", {30, 20, {{1, 2, static_cast<double>(i % 20 + 1), 5, 1}}});
    });
    QVERIFY(acknowledged >= 60);
    BoxLabelStore s(path);
    for (int k = 0; k <= acknowledged; ++k)
      QCOMPARE(s.images().at("image-" + std::to_string(k) + ".png").boxes.at(0).width, static_cast<double>(k % 20 + 1));
    QVERIFY(s.images().size() <= static_cast<size_t>(acknowledged) + 2);
  }

  void aTornLastLineIsTheChangeInFlight() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    writeFileAtomically(path + ".journal", "{\"set\":\"a.png\",\"label\":\"cat\",\"by\":\"person\"}\n{\"set\":\"b.p");
    LabelStore s(path);
    QCOMPARE(s.labels().size(), size_t(1));
    QCOMPARE(s.labelOf("a.png")->label, std::string("cat"));
  }

  void aSecondEditorIsRefused() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    LabelStore first(path);
    const QString why = refusal([&] { LabelStore second(path); });
    QVERIFY2(why.contains("is open in another window or program"), qPrintable(why));
  }

  // Another program edits the CSV while the store is open: its rows are kept,
  // the store's changes go on top, and compact() says so.
  void anotherProgramsEditsAreMergedNotOverwritten() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    writeFileAtomically(path, "file,label,made_by\na.png,cat,person\nb.png,cat,person\n");
    LabelStore s(path);
    s.set("b.png", "dog");
    QVERIFY(!s.changedOnDisk());
    writeFileAtomically(path, "file,label,made_by\na.png,bird,person\nb.png,cat,person\nz.png,fox,person\n");
    QVERIFY(s.changedOnDisk());
    const std::string said = s.compact();
    QVERIFY2(said.find("changed by another program") != std::string::npos, said.c_str());
    QCOMPARE(readFileBytes(path, "labels"),
             std::string("file,label,made_by\na.png,bird,person\nb.png,dog,person\nz.png,fox,person\n"));
  }

  void aBadFileIsRefusedWithItsRowNamed() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("labels.csv").toStdString();
    writeFileAtomically(path, "file,label\na.png,cat\nb.png,dog\na.png,dog\n");
    QString why = refusal([&] { LabelStore s(path); });
    QVERIFY2(why.contains("row 4: a.png is labelled already in row 2"), qPrintable(why));
    writeFileAtomically(path, "file,label,made_by\na.png,cat,robot\n");
    why = refusal([&] { LabelStore s(path); });
    QVERIFY2(why.contains("row 2: made_by \"robot\""), qPrintable(why));
    writeFileAtomically(path, "image,class\na.png,cat\n");
    why = refusal([&] { LabelStore s(path); });
    QVERIFY2(why.contains("needs the columns file and label"), qPrintable(why));
  }
  // A labels file names its images inside the labelled folder: one from
  // elsewhere naming "../" or an absolute path is refused on open, in an
  // edit and in an export, and nothing is read or written outside.
  void namesOutsideTheFolderAreRefused() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString() + "/photos";
    writeImages(root, {"a.png"});
    writeImages(dir.path().toStdString(), {"secret.png"});
    const std::string path = root + "/labels.csv";
    const std::vector<std::string> names = {"../secret.png", "sub/../../secret.png",
                                            dir.path().toStdString() + "/secret.png"};
    for (const std::string& name : names) {
      writeFileAtomically(path, "file,label\na.png,cat\n" + name + ",dog\n");
      const QString why = refusal([&] { LabelStore s(path); });
      QVERIFY2(why.contains(QString::fromStdString(path + " row 3: the image \"" + name + "\" is not a name inside")),
               qPrintable(why));
    }
    std::filesystem::remove(path);
    {
      LabelStore s(path);
      QVERIFY(refusal([&] { s.set("../secret.png", "dog", "person"); }).contains("is not a name inside"));
      s.set("a.png", "cat", "person");
    }
    const std::string boxes = root + "/boxes.json";
    nlohmann::json doc = {{"images", {{{"id", 1}, {"file_name", "../secret.png"}, {"width", 30}, {"height", 20}}}},
                          {"annotations", nlohmann::json::array()},
                          {"categories", {{{"id", 1}, {"name", "cat"}}}}};
    writeFileAtomically(boxes, doc.dump());
    const QString why = refusal([&] { BoxLabelStore s(boxes); });
    QVERIFY2(why.contains(QString::fromStdString(boxes) + " images[0]") && why.contains("is not a name inside"),
             qPrintable(why));
    // The exports check again (their files are named by the images).
    const std::string out = dir.path().toStdString() + "/out/deep/er";
    QVERIFY(refusal([&] {
              exportClassFolders(root, {{"../../../secret.png", {"cat", "person"}}}, out);
            }).contains("is not a name inside"));
    QVERIFY(refusal([&] {
              exportYolo(root, {{"../secret.png", {30, 20, {}}}}, {{1, "cat"}}, out + "2");
            }).contains("is not a name inside"));
    QVERIFY(!std::filesystem::exists(dir.path().toStdString() + "/out/secret.png"));
    QVERIFY(!std::filesystem::exists(dir.path().toStdString() + "/out/deep/images"));
  }

  // The Label tab's boxes (issue 62, items 1 and 2): each change survives a
  // reopen through the journal; compact() writes a COCO file that the
  // detection task's reader takes with the same boxes; a second editor is
  // refused; a bad file is refused with the entry named.
  void boxesReachACocoFileTheDetectorReads() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    writeImages(root, {"a.png", "b.png", "c.png"});
    const std::string path = root + "/boxes.json";
    {
      BoxLabelStore s(path);
      const int64_t cat = s.addCategory("cat"), dog = s.addCategory("dog");
      QCOMPARE(cat, int64_t(1));
      QCOMPARE(dog, int64_t(2));
      s.setBoxes("a.png", {30, 20, {{1, 2, 10, 8, cat, "person"}, {12.5, 3, 17.5, 17, dog, "accepted"}}});
      s.setBoxes("b.png", {30, 20, {}});  // looked at: nothing to find
      s.setBoxes("c.png", {30, 20, {{0, 0, 5, 5, dog, "person"}}});
      s.clear("c.png");
      QCOMPARE(refusal([&] {
                 s.setBoxes("a.png", {30, 20, {{25, 2, 10, 8, cat, "person"}}});
               }),
               QString("a box of a.png is not within the image or has no area"));
      QVERIFY(refusal([&] { s.setBoxes("a.png", {30, 20, {{1, 2, 3, 4, 9, "person"}}}); }).contains("category 9"));
      QVERIFY(refusal([&] { BoxLabelStore other(path); }).contains("open in another window"));
    }  // no compact(): the journal holds every change
    BoxLabelStore s(path);
    QCOMPARE(s.pendingChanges(), int64_t(6));
    QCOMPARE(s.images().size(), size_t(2));
    QCOMPARE(s.images().at("a.png").boxes.at(1), (LabelBox{12.5, 3, 17.5, 17, 2, "accepted"}));
    QVERIFY(s.compact().empty());
    const BoxAnnotations read = readBoxAnnotations(path, root, "coco", BadBoxes::fail);
    QCOMPARE(read.images.size(), size_t(2));
    QCOMPARE(read.boxes.size(), size_t(2));
    QCOMPARE(read.categories.size(), size_t(2));
    QCOMPARE(read.categories[1].name, std::string("dog"));
    QCOMPARE(read.boxes[1].x, 12.5);
    QCOMPARE(read.boxes[1].w, 17.5);
    QCOMPARE(read.boxes[1].label, int64_t(1));
    // Another program's new image is kept; this store's change lands on top.
    nlohmann::json doc = nlohmann::json::parse(readFileBytes(path, "boxes"));
    doc["images"].push_back({{"id", 9}, {"file_name", "c.png"}, {"width", 30}, {"height", 20}});
    writeFileAtomically(path, doc.dump());
    s.setBoxes("b.png", {30, 20, {{2, 2, 4, 4, 1, "person"}}});
    QVERIFY(s.compact().find("changed by another program") != std::string::npos);
    QCOMPARE(s.images().size(), size_t(3));
    QCOMPARE(s.images().at("b.png").boxes.size(), size_t(1));
  }

  // The labels in the layouts other tools read (issue 62, item 1), each
  // read back by the studio's own readers: class folders by the image
  // folder's plan, YOLO and VOC by the detection task's reader, with the
  // same boxes; an export never writes into a folder that has files.
  void labelsExportAsFoldersYoloAndVoc() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString() + "/photos";
    writeImages(root, {"a.png", "b.png", "sub/c.png", "d.png"});
    const std::map<std::string, ImageLabel> labels = {
        {"a.png", {"cat", "person"}}, {"b.png", {"dog", "accepted"}}, {"sub/c.png", {"cat", "person"}}};
    const std::string folders = dir.path().toStdString() + "/folders";
    QCOMPARE(exportClassFolders(root, labels, folders), int64_t(3));
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = folders;
    c.data.test_fraction = 0.5;
    const DataPlan plan = planData(c);
    QCOMPARE(plan.classNames, (std::vector<std::string>{"cat", "dog"}));
    QCOMPARE(plan.train.size() + plan.test.size(), int64_t(3));
    QVERIFY(refusal([&] { exportClassFolders(root, labels, folders); }).contains("is not empty"));

    const std::vector<BoxCategory> categories = {{4, "cat"}, {9, "dog \"big\""}};
    const std::map<std::string, ImageBoxes> images = {
        {"a.png", {30, 20, {{1, 2, 10, 8, 4, "person"}, {12.5, 3, 17.5, 17, 9, "accepted"}}}},
        {"b.png", {30, 20, {}}},
        {"sub/c.png", {30, 20, {{0, 0, 30, 20, 9, "person"}}}}};
    for (const std::string format : {"yolo", "voc"}) {
      const std::string out = dir.path().toStdString() + "/" + format;
      const int64_t n =
          format == "yolo" ? exportYolo(root, images, categories, out) : exportVoc(root, images, categories, out);
      QCOMPARE(n, int64_t(3));
      const BoxAnnotations read =
          format == "yolo" ? readBoxAnnotations(out + "/data.yaml", out + "/images", "yolo", BadBoxes::fail)
                           : readBoxAnnotations(out + "/Annotations", out + "/JPEGImages", "voc", BadBoxes::fail);
      QCOMPARE(read.images.size(), size_t(3));  // d.png, unlabelled, is not exported
      QCOMPARE(read.boxes.size(), size_t(3));
      std::map<std::string, std::vector<std::array<double, 4>>> byImage;
      for (const AnnotatedBox& b : read.boxes) {
        const std::string file = read.images[static_cast<size_t>(b.image)].file;
        const std::string name = std::filesystem::relative(file, out + (format == "yolo" ? "/images" : "/JPEGImages"));
        byImage[name].push_back({b.x, b.y, b.w, b.h});
        QCOMPARE(read.categories[static_cast<size_t>(b.label)].name,
                 name == "a.png" && b.x < 5 ? std::string("cat") : std::string("dog \"big\""));
      }
      for (const auto& [name, want] : images)
        for (size_t k = 0; k < want.boxes.size(); ++k) {
          const LabelBox& w = want.boxes[k];
          const auto& got = byImage.at(name).at(k);
          QVERIFY2(std::abs(got[0] - w.x) < 1e-6 && std::abs(got[1] - w.y) < 1e-6 &&
                       std::abs(got[2] - w.width) < 1e-6 && std::abs(got[3] - w.height) < 1e-6,
                   (format + " " + name).c_str());
        }
    }
  }

  void aBadBoxesFileIsRefusedWithTheEntryNamed() {
    QFETCH(QString, change);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path = dir.filePath("boxes.json").toStdString();
    nlohmann::json doc = {{"images", {{{"id", 1}, {"file_name", "a.png"}, {"width", 30}, {"height", 20}}}},
                          {"annotations", {{{"id", 7}, {"image_id", 1}, {"category_id", 1}, {"bbox", {1, 1, 5, 5}}}}},
                          {"categories", {{{"id", 1}, {"name", "cat"}}}}};
    nlohmann::json bad = {{"id", 8}, {"image_id", 1}, {"category_id", 1}, {"bbox", {1, 1, 5, 5}}};
    if (change == "unknown image") bad["image_id"] = 4;
    if (change == "outside") bad["bbox"] = {20, 1, 15, 5};
    if (change == "duplicate id") bad["id"] = 7;
    doc["annotations"].push_back(bad);
    writeFileAtomically(path, doc.dump());
    const QString e = refusal([&] { BoxLabelStore s(path); });
    QVERIFY2(e.contains(QString::fromStdString(path) + " annotations[1]") && e.contains(message), qPrintable(e));
  }
  void aBadBoxesFileIsRefusedWithTheEntryNamed_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown image") << "unknown image"
                                   << "image_id 4 is none of the file's images";
    QTest::newRow("outside") << "outside"
                             << "is not within its image a.png (30 x 20)";
    QTest::newRow("duplicate id") << "duplicate id"
                                  << "(id 7): the id is given twice";
  }
};

QTEST_GUILESS_MAIN(TestLabelStore)
#include "test_label_store.moc"
