// The Label tab (issue 62, items 1-3 and 5) as a person uses it: number
// keys, arrows, Delete, Z and Shift+Z write exactly the expected labels
// file; a second editor of the same file is refused; a rename merges and
// undoes in one step; a run's proposals equal `label --prelabel`'s for the
// same run and images, Return accepts them and another class corrects
// them, each said in made_by; "Train on these labels" folds the journal
// into the file that a classifier then trains on.
#include <QtTest/QtTest>

#include <QComboBox>
#include <QDir>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>

#include <functional>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/label_store.h"
#include "test_support.h"
#include "ui/audit/audit_panel.h"
#include "ui/label/box_canvas.h"
#include "ui/label/box_session.h"
#include "ui/label/label_panel.h"
#include "ui/label/label_session.h"
#include "ui/runs/run_catalog.h"

using namespace studio;
using studio::ui::LabelPanel;

namespace {

// Image i: dark (i even) or bright (odd) noise, size x size, RGB.
void writePhotos(const QString& dir, int n, int size = 12) {
  QDir().mkpath(dir);
  for (int i = 0; i < n; ++i) {
    Image img;
    img.height = img.width = size;
    img.channels = 3;
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u + 7;
    for (int k = 0; k < size * size * 3; ++k) {
      x = x * 1103515245u + 12345u;
      img.pixels.push_back(static_cast<uint8_t>((i % 2 ? 150 : 0) + (x >> 16) % 90));
    }
    writePngFile((dir + QString("/%1.png").arg(i, 2, 10, QChar('0'))).toStdString(), img);
  }
}

QString csvOf(const QString& path) { return QString::fromUtf8(test::contents(path)); }

// photos/NN.png (n of them) and photos/labels.csv labelling the first
// `labelled`, image i as classOf(i); returns the labels file.
QString labelledPhotos(const QString& photos, int n, int labelled, const std::function<QString(int)>& classOf) {
  writePhotos(photos, n);
  const QString labels = photos + "/labels.csv";
  QString csv = "file,label,made_by\n";
  for (int i = 0; i < labelled; ++i) csv += QString("%1.png,%2,person\n").arg(i, 2, 10, QChar('0')).arg(classOf(i));
  writeFileAtomically(labels.toStdString(), csv.toStdString());
  return labels;
}

}  // namespace

class TestLabelTab : public QObject {
  Q_OBJECT

  void press(LabelPanel& panel, Qt::Key key, Qt::KeyboardModifiers mods = Qt::NoModifier) {
    QTest::keyClick(panel.thumbnails(), key, mods);
  }

 private Q_SLOTS:
  void keysWriteTheLabelsFile() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    writePhotos(photos, 6);
    const QString labels = dir.path() + "/labels.csv";
    {
      LabelPanel panel;
      QVERIFY(panel.open(photos, labels));
      panel.session()->addClass("dark");
      panel.session()->addClass("bright");
      QCOMPARE(panel.currentImage(), QString("00.png"));
      press(panel, Qt::Key_1);  // 00 dark, then 01
      QCOMPARE(panel.currentImage(), QString("01.png"));
      press(panel, Qt::Key_2);      // 01 bright, then 02
      press(panel, Qt::Key_Right);  // 03
      press(panel, Qt::Key_2);      // 03 bright, then 04
      press(panel, Qt::Key_1);      // 04 dark, then 05
      press(panel, Qt::Key_1);      // 05 dark (a slip)
      press(panel, Qt::Key_Z);      // undone
      QVERIFY(!panel.session()->labelOf("05.png"));
      press(panel, Qt::Key_Z, Qt::ShiftModifier);  // redone
      QCOMPARE(panel.session()->labelOf("05.png")->label, std::string("dark"));
      QCOMPARE(panel.currentImage(), QString("05.png"));
      press(panel, Qt::Key_Left);
      press(panel, Qt::Key_Left);
      QCOMPARE(panel.currentImage(), QString("03.png"));
      press(panel, Qt::Key_Delete);  // 03 cleared
      press(panel, Qt::Key_Left);
      press(panel, Qt::Key_Left);
      press(panel, Qt::Key_2);  // 01 again: bright already, nothing to undo
      // Each change is on the disk already: another editor is refused, naming the file.
      QString refused;
      try {
        LabelStore other(labels.toStdString());
      } catch (const InputError& e) {
        refused = QString::fromUtf8(e.what());
      }
      QVERIFY2(refused.contains(labels), qPrintable(refused));
      LabelPanel second;
      QSignalSpy said(&second, &LabelPanel::message);
      QVERIFY(!second.open(photos, labels));
      QCOMPARE(said.size(), 1);
      QVERIFY(said.front().at(1).toBool());
      // The class list says the counts; the filter shows the unlabelled ones alone.
      QCOMPARE(panel.classList()->item(0)->text(), QString("1  dark — 3"));
      QCOMPARE(panel.classList()->item(1)->text(), QString("2  bright — 1"));
      panel.filter()->setCurrentIndex(1);
      QStringList shown;
      for (int i = 0; i < panel.thumbnails()->count(); ++i)
        if (!panel.thumbnails()->item(i)->isHidden())
          shown << panel.thumbnails()->item(i)->data(Qt::UserRole).toString();
      QCOMPARE(shown, (QStringList{"02.png", "03.png"}));
      QVERIFY(panel.summary().startsWith("4 of 6 images labelled"));
      QCOMPARE(panel.editor()->exportLabels("class folders", dir.path() + "/folders"), int64_t(4));
      QVERIFY(QFile::exists(dir.path() + "/folders/dark/05.png") &&
              QFile::exists(dir.path() + "/folders/bright/01.png"));
      QVERIFY(panel.open(photos, labels));  // the tab's own file again: it lets go first
      QCOMPARE(panel.session()->labelOf("05.png")->label, std::string("dark"));
    }  // closing the tab folds the journal into the file
    QCOMPARE(csvOf(labels), QString("file,label,made_by\n00.png,dark,person\n01.png,bright,person\n"
                                    "04.png,dark,person\n05.png,dark,person\n"));
    QVERIFY(!QFile::exists(labels + ".journal") || QFileInfo(labels + ".journal").size() == 0);
    // The CLI's label --export lays the same file out as class folders.
    const test::Ran exported =
        test::cli({"label", "--export", labels, "--data", photos, "--out", dir.path() + "/by-class"});
    QVERIFY2(exported.code == 0 && exported.output.contains("exported 4 labelled images as folders"),
             qPrintable(exported.output));
    QVERIFY(QFile::exists(dir.path() + "/by-class/dark/04.png") &&
            QFile::exists(dir.path() + "/by-class/bright/01.png"));
    const test::Ran wrong =
        test::cli({"label", "--export", labels, "--data", photos, "--out", dir.path() + "/x", "--format", "voc"});
    QVERIFY2(wrong.code == 2 && wrong.output.contains("holds classes; give folders"), qPrintable(wrong.output));
  }

  // A labels file another program changes while the tab is open (issue 62,
  // item 2): merged, its new rows kept and this window's labels on top,
  // never written over.
  void anotherProgramsEditsAreMergedWhileOpen() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    const QString labels = labelledPhotos(photos, 4, 1, [](int) { return "dark"; });
    LabelPanel panel;
    QVERIFY(panel.open(photos, labels));
    QVERIFY(!panel.mergeOutsideEdits());
    panel.thumbnails()->setCurrentRow(1);
    press(panel, Qt::Key_1);  // 01 dark, in the journal
    writeFileAtomically(labels.toStdString(), "file,label,made_by\n00.png,dark,person\n03.png,bright,person\n");
    QVERIFY(panel.mergeOutsideEdits());
    QCOMPARE(panel.session()->labelOf("03.png")->label, std::string("bright"));
    QCOMPARE(panel.session()->labelOf("01.png")->label, std::string("dark"));
    QVERIFY(panel.session()->classes().contains("bright"));
    QCOMPARE(csvOf(labels),
             QString("file,label,made_by\n00.png,dark,person\n01.png,dark,person\n03.png,bright,person\n"));
    writeFileAtomically(labels.toStdString(), "file,label\n00.png\n");  // a file the store cannot read: said once
    QSignalSpy said(&panel, &LabelPanel::message);
    QVERIFY(!panel.mergeOutsideEdits());
    QVERIFY(!panel.mergeOutsideEdits());
    QCOMPARE(said.size(), 1);
  }

  void renameMergesInOneStep() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    writePhotos(photos, 4);
    const QString labels = photos + "/labels.csv";
    writeFileAtomically(labels.toStdString(),
                        "file,label,made_by\n00.png,cat,person\n01.png,kitten,person\n"
                        "02.png,dog,person\ngone.png,dog,person\n");
    {  // a row whose image is not in the folder is said when the tab opens the file
      LabelPanel panel;
      QSignalSpy said(&panel, &LabelPanel::message);
      QVERIFY(panel.open(photos));
      QCOMPARE(said.size(), 1);
      QVERIFY2(said.front().at(0).toString().contains("1 image(s) that are not in") &&
                   said.front().at(0).toString().contains("gone.png"),
               qPrintable(said.front().at(0).toString()));
    }
    writeFileAtomically(labels.toStdString(),
                        "file,label,made_by\n00.png,cat,person\n01.png,kitten,person\n02.png,dog,person\n");
    ui::LabelSession s(photos);
    QCOMPARE(s.classes(), (QStringList{"cat", "dog", "kitten"}));
    QCOMPARE(s.renameClass("kitten", "cat"), 1);
    QCOMPARE(s.classes(), (QStringList{"cat", "dog"}));
    QCOMPARE(s.countOf("cat"), 2);
    QCOMPARE(s.undo(), QStringList{"01.png"});
    QCOMPARE(s.labelOf("01.png")->label, std::string("kitten"));
    QCOMPARE(s.countOf("cat"), 1);
    QVERIFY_THROWS_EXCEPTION(InputError, s.addClass("  "));
  }

  void proposalsAreThoseOfPrelabel() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    const QString labels = labelledPhotos(photos, 16, 10, [](int i) { return i % 2 ? "bright" : "dark"; });
    LabelPanel panel;
    QVERIFY(panel.open(photos));
    QSignalSpy train(&panel, &LabelPanel::trainOnLabels);
    // A classifier trained on the labels file, as "Train on these labels" sets it.
    const QString runs = dir.path() + "/runs";
    const test::Ran trained =
        test::cli({"train", "--set", "data.format=image_folder", "--set", "data.root=" + photos, "--set",
                   "data.targets_file=" + labels, "--set", "model.kind=mlp", "--set", "train.epochs=3", "--set",
                   "train.batch_size=4", "--set", "schedule.kind=constant", "--out", runs});
    QVERIFY2(trained.code == 0, qPrintable(trained.output));
    const QString run = test::onlyRunIn(runs);
    QCOMPARE(ui::readRunInfo(run).labels, qint64(10));  // the runs list's Labels column (item 5)
    const QString out = dir.path() + "/proposals.json";
    const test::Ran pre = test::cli({"label", "--prelabel", run, "--data", photos, "--out", out, "--top-k", "1"});
    QVERIFY2(pre.code == 0, qPrintable(pre.output));
    const nlohmann::json doc = nlohmann::json::parse(test::contents(out).toStdString());
    panel.proposeWith(run);
    QVERIFY(panel.busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), test::kHangLimitMs);
    QCOMPARE(static_cast<int>(doc["images"].size()), 16);
    for (const auto& image : doc["images"]) {
      const QString name = QDir(photos).relativeFilePath(QString::fromStdString(image["file"].get<std::string>()));
      const ui::ClassProposal* p = panel.session()->proposalOf(name);
      QVERIFY2(p, qPrintable(name));
      QCOMPARE(p->label, QString::fromStdString(image["class"].get<std::string>()));
      QCOMPARE(p->probability, image["probability"].get<double>());
    }
    // Return accepts the proposal; another class corrects it.
    panel.filter()->setCurrentIndex(3);  // proposed, not labelled: 10..15
    QCOMPARE(panel.currentImage(), QString("10.png"));
    const QString accepted = panel.session()->proposalOf("10.png")->label;
    press(panel, Qt::Key_Return);
    QCOMPARE(panel.session()->labelOf("10.png")->label, accepted.toStdString());
    QCOMPARE(panel.session()->labelOf("10.png")->madeBy, std::string("accepted"));
    QCOMPARE(panel.currentImage(), QString("11.png"));
    const QString proposed = panel.session()->proposalOf("11.png")->label;
    const int other = panel.session()->classes().indexOf(proposed == "dark" ? "bright" : "dark");
    press(panel, static_cast<Qt::Key>(Qt::Key_1 + other));
    QCOMPARE(panel.session()->labelOf("11.png")->madeBy, std::string("corrected"));
    // The journal's two changes are in the file once the tab trains on it.
    auto* trainButton = panel.findChild<QPushButton*>("trainOnLabels");
    QVERIFY(trainButton);
    train.clear();
    trainButton->click();
    QCOMPARE(train.size(), 1);
    QCOMPARE(train.front().at(1).toString(), labels);
    const QString written = csvOf(labels);
    QVERIFY2(written.contains("10.png," + accepted + ",accepted\n"), qPrintable(written));
    QVERIFY2(written.contains("11.png,") && written.contains(",corrected\n"), qPrintable(written));
  }

  // The Audit tab's flagged labels open in the Label tab (issue 62, item
  // 4): an audit of a labels file lists its suspects; "Review in the Label
  // tab" shows exactly those images, each with the class the audit
  // suggests, and Return takes the suggestion into the labels file.
  void auditFlagsOpenHere() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    // Four of them labelled against their look.
    const QString labels =
        labelledPhotos(photos, 24, 24, [](int i) { return (i % 2) != (i % 6 == 0) ? "bright" : "dark"; });
    const QString audits = dir.path() + "/audits";
    const test::Ran audited =
        test::cli({"audit", "--folds", "2", "--set", "data.format=image_folder", "--set", "data.root=" + photos,
                   "--set", "data.targets_file=" + labels, "--set", "model.kind=mlp", "--set", "train.epochs=4",
                   "--set", "train.batch_size=4", "--set", "schedule.kind=constant", "--out", audits});
    QVERIFY2(audited.code == 0, qPrintable(audited.output));
    const QString audit = test::onlyRunIn(audits);
    std::map<QString, QString> issues;  // the audit's own list: file -> suggested
    const QStringList rows = csvOf(audit + "/label_issues.csv").split('\n', Qt::SkipEmptyParts);
    for (int r = 1; r < rows.size(); ++r) {
      const QStringList cells = rows[r].split(',');
      issues[QDir(photos).relativeFilePath(cells[1])] = cells[3];
    }
    QVERIFY(!issues.empty());
    ui::AuditPanel auditPanel;
    QVERIFY(auditPanel.openAudit(audit));
    LabelPanel panel;
    connect(&auditPanel, &ui::AuditPanel::reviewLabels, &panel, &LabelPanel::review);
    auto* review = auditPanel.findChild<QPushButton*>("auditReview");
    QVERIFY(review && review->isEnabled());
    review->click();
    QVERIFY(panel.session());
    std::map<QString, QString> shown;
    for (int i = 0; i < panel.thumbnails()->count(); ++i)
      if (!panel.thumbnails()->item(i)->isHidden()) {
        const QString image = panel.thumbnails()->item(i)->data(Qt::UserRole).toString();
        shown[image] = panel.session()->proposalOf(image)->label;
      }
    QCOMPARE(shown, issues);
    const QString first = panel.currentImage();
    press(panel, Qt::Key_Return);
    QCOMPARE(QString::fromStdString(panel.session()->labelOf(first)->label), issues.at(first));
    QCOMPARE(panel.session()->labelOf(first)->madeBy, std::string("accepted"));
  }

  // Boxes as a person makes them (issue 62, item 1's test): drag to draw,
  // drag inside to move, drag an edge to resize, a number key for the
  // selected box's class, Delete, Z and Shift+Z, Return for done; proposals
  // accepted with Return, a moved one corrected. The COCO file written is
  // exactly the expected one.
  void boxesDrawnMovedResizedAndDeleted() {
    QTemporaryDir dir;
    const QString photos = dir.path() + "/photos";
    writePhotos(photos, 3, 40);
    const QString boxes = dir.path() + "/boxes.json";
    {
      LabelPanel panel;
      QVERIFY(panel.open(photos, boxes));
      QVERIFY(panel.boxSession() && !panel.session());
      panel.boxSession()->addClass("cat");
      panel.boxSession()->addClass("dog");
      ui::BoxCanvas* c = panel.canvas();
      c->setScale(4);  // widget pixels 4 to an image pixel: the drags below land on whole image pixels
      auto at = [](int x, int y) { return QPoint(4 * x, 4 * y); };
      auto drag = [&](QPoint from, QPoint to) {
        QTest::mousePress(c, Qt::LeftButton, {}, from);
        QTest::mouseMove(c, to);
        QTest::mouseRelease(c, Qt::LeftButton, {}, to);
      };
      press(panel, Qt::Key_2);     // dog draws
      drag(at(4, 5), at(20, 17));  // drawn: 4,5 16x12
      QCOMPARE(c->boxes().boxes.at(0), (LabelBox{4, 5, 16, 12, 2, "person"}));
      drag(at(10, 10), at(13, 12));  // moved by 3,2
      drag(at(23, 12), at(30, 12));  // its right edge to 30
      QCOMPARE(panel.boxSession()->boxesOf("00.png")->boxes.at(0), (LabelBox{7, 7, 23, 12, 2, "person"}));
      drag(at(25, 22), at(35, 28));                          // a second box, dog, selected
      press(panel, Qt::Key_1);                               // ... made a cat
      QTest::mouseClick(c, Qt::LeftButton, {}, at(10, 10));  // the first selected
      press(panel, Qt::Key_Delete);
      QCOMPARE(panel.boxSession()->boxesOf("00.png")->boxes.size(), size_t(1));
      press(panel, Qt::Key_Z);  // back
      QCOMPARE(panel.boxSession()->boxesOf("00.png")->boxes.size(), size_t(2));
      press(panel, Qt::Key_Z, Qt::ShiftModifier);  // removed again
      press(panel, Qt::Key_Z);                     // and back
      QCOMPARE(c->boxes().boxes.size(), size_t(2));
      press(panel, Qt::Key_Return);  // done: 01.png next
      QCOMPARE(panel.currentImage(), QString("01.png"));
      press(panel, Qt::Key_Return);  // 01.png: nothing to find; 02.png next
      QCOMPARE(panel.currentImage(), QString("02.png"));
      // 02.png: a run's two proposals, accepted with Return; one then moved: corrected.
      panel.boxSession()->setProposals({{"02.png", {{1, 1, 8, 8, 1, "accepted"}, {20, 20, 10, 10, 2, "accepted"}}}});
      press(panel, Qt::Key_Left);
      press(panel, Qt::Key_Right);  // shown again, with its proposals
      press(panel, Qt::Key_Return);
      QCOMPARE(panel.currentImage(), QString("02.png"));  // the last image: it stays
      c->setScale(4);
      drag(at(24, 24), at(26, 24));
      QCOMPARE(panel.classList()->item(0)->text(), QString("1  cat — 2"));
      QCOMPARE(panel.classList()->item(1)->text(), QString("2  dog — 2"));
      QCOMPARE(panel.editor()->exportFormats(), (QStringList{"YOLO", "Pascal VOC"}));
      QCOMPARE(panel.editor()->exportLabels("YOLO", dir.path() + "/yolo"), int64_t(3));
      QVERIFY(QFile::exists(dir.path() + "/yolo/labels/00.txt") && QFile::exists(dir.path() + "/yolo/data.yaml"));
    }
    const nlohmann::json written = nlohmann::json::parse(test::contents(boxes).toStdString());
    auto box = [](int id, int image, int cat, std::vector<double> b, const char* by) {
      return nlohmann::json{{"id", id},     {"image_id", image},   {"category_id", cat},
                            {"bbox", b},    {"area", b[2] * b[3]}, {"iscrowd", 0},
                            {"made_by", by}};
    };
    const nlohmann::json expected = {
        {"images",
         {{{"id", 1}, {"file_name", "00.png"}, {"width", 40}, {"height", 40}},
          {{"id", 2}, {"file_name", "01.png"}, {"width", 40}, {"height", 40}},
          {{"id", 3}, {"file_name", "02.png"}, {"width", 40}, {"height", 40}}}},
        {"annotations",
         {box(1, 1, 2, {7, 7, 23, 12}, "person"), box(2, 1, 1, {25, 22, 10, 6}, "person"),
          box(3, 3, 1, {1, 1, 8, 8}, "accepted"), box(4, 3, 2, {22, 20, 10, 10}, "corrected")}},
        {"categories", {{{"id", 1}, {"name", "cat"}}, {{"id", 2}, {"name", "dog"}}}}};
    QVERIFY2(written == expected, written.dump(1).c_str());
  }
};

QTEST_MAIN(TestLabelTab)
#include "test_label_tab.moc"
