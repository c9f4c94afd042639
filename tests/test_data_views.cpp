// The window's views of a person's own data and model, offscreen:
//  - the Data tab shows an image folder's classes with sample images and the
//    counts of each split as bars (what is held out included), a table's
//    first rows, and a data mistake as an inline error under its setting;
//  - the Model tab lists the layers, and asks before running a TorchScript
//    file's code; Start asks too, and refuses when the person says no;
//  - the Evaluation tab shows a finished run's confusion matrix (counts and
//    row-normalised), per-class figures and confident mistakes, follows a
//    live run, and compares two runs class by class;
//  - the status bar shows the loading phase with its progress.
#include <QtTest/QtTest>

#include <QRegularExpression>

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QTreeWidget>

#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/sha256.h"
#include "test_support.h"
#include "ui/audit/audit_panel.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/data/augment_preview_view.h"
#include "ui/data/data_panel.h"
#include "ui/data/model_panel.h"
#include "ui/evaluation/calibration_view.h"
#include "ui/evaluation/evaluation_panel.h"
#include "ui/evaluation/labels_view.h"
#include "ui/evaluation/regression_view.h"
#include "ui/runs/run_export.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_status_bar.h"
#include "ui/window/run_toolbar.h"

using namespace studio;

namespace {

constexpr int kTimeout = test::kHangLimitMs;

// 3 classes of 16x16 RGB images that differ by colour: learnable at once.
void makeFolder(const QString& root) {
  const char* names[] = {"blue", "green", "red"};
  for (int k = 0; k < 3; ++k) {
    QDir().mkpath(root + "/" + names[k]);
    for (int i = 0; i < 40 + 10 * k; ++i) {
      Image img;
      img.height = img.width = 16;
      img.channels = 3;
      uint32_t x = static_cast<uint32_t>(k * 1000 + i);
      for (int p = 0; p < 16 * 16; ++p)
        for (int c = 0; c < 3; ++c) {
          x = x * 1103515245u + 12345u;
          const int base = c == 2 - k ? 200 : 40;
          img.pixels.push_back(static_cast<uint8_t>(base + static_cast<int>((x >> 16) % 40)));
        }
      writePngFile(QString("%1/%2/%3.png").arg(root, names[k]).arg(i, 3, 10, QChar('0')).toStdString(), img);
    }
  }
}

}  // namespace

class TestDataViews : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  std::unique_ptr<ui::MainWindow> m_window;
  QString m_folder, m_firstRun;

  TrainConfig folderConfig(const QString& name) {
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = name.toStdString();
    c.data.format = DataFormat::image_folder;
    c.data.root = m_folder.toStdString();
    c.data.train_limit = 0;
    c.data.test_limit = 0;
    c.data.test_fraction = 0.25;
    c.model.kind = "cnn";
    c.model.width = 8;
    c.model.depth = 2;
    c.train.batch_size = 16;
    c.train.epochs = 2;
    c.optimizer.kind = OptimizerKind::adam;
    c.optimizer.lr = 0.01;
    return c;
  }

  // A small MLP on a table for this task.
  TrainConfig tableConfig(const char* name, const char* task, const QString& table) {
    TrainConfig c = folderConfig(name);
    c.task.kind.setName(task);
    c.data.format = DataFormat::csv;
    c.data.root = table.toStdString();
    c.model.kind = "mlp";
    c.model.width = 16;
    c.model.depth = 1;
    c.train.epochs = 3;
    return c;
  }

  ui::MetricChart* chart(ui::PlotsPanel::Chart c) { return m_window->plotsPanel()->chart(c); }

  RunSummary runToEnd(const TrainConfig& c) {
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    if (!m_window->startRun()) qFatal("not started: %s", qPrintable(m_window->lastMessage()));
    if (!QTest::qWaitFor([&] { return finished.count() == 1; }, kTimeout)) qFatal("the run did not end");
    return finished.front().front().value<RunSummary>();
  }

 private Q_SLOTS:
  void initTestCase() {
    QCoreApplication::setOrganizationName("TrainingStudioTests");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath("config"));
    m_folder = m_dir.filePath("pictures");
    makeFolder(m_folder);
    m_window = std::make_unique<ui::MainWindow>(QString::fromStdString(defaultPresetDir()), false);
    m_window->resize(1400, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
  }

  void dataTabShowsClassesSamplesAndSplits() {
    m_window->settingsPanel()->setConfig(folderConfig("preview"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    ui::DataPanel* data = m_window->dataPanel();
    QVERIFY2(data->preview().ok, qPrintable(data->preview().error));
    QCOMPARE(data->preview().description.classNames, (std::vector<std::string>{"blue", "green", "red"}));
    // Bars: training and test (held out: floor(0.25 * n) of each class).
    const auto bars = data->barValues();
    QCOMPARE(bars.size(), size_t(2));
    QCOMPARE(bars[0], (std::vector<double>{30, 38, 45}));
    QCOMPARE(bars[1], (std::vector<double>{10, 12, 15}));
    QCOMPARE(data->sampleCount(), 3 * 6);
    QVERIFY(data->findChild<QLabel*>("dataSummary")->text().contains("25% of each class"));
    QVERIFY(data->findChild<QLabel*>("dataSummary")->text().contains("3x16x16"));
    // The plan follows the data: 113 training images in batches of 16, 2 epochs.
    ui::MetricChart* lr = m_window->plotsPanel()->chart(ui::PlotsPanel::LearningRate);
    QTRY_VERIFY(lr->series("preview/lr") && lr->series("preview/lr")->size() == 2 * 8);
  }

  void dataMistakesAreInlineErrors() {
    // A class folder without images: the message under data.root names it.
    QDir().mkpath(m_folder + "/empty-class");
    m_window->dataPanel()->recheckRequested();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->settingsPanel()->errorFor("data.root").contains("empty-class"), kTimeout);
    QVERIFY(!m_window->runToolBar()->startAction()->isEnabled());
    QVERIFY(m_window->dataPanel()->findChild<QLabel*>("dataError")->text().contains("holds no images"));
    QVERIFY(QDir(m_folder + "/empty-class").removeRecursively());
    m_window->dataPanel()->recheckRequested();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->settingsPanel()->isValid(), kTimeout);
    // A table: its first rows; a label column it does not have: an error under that setting.
    const QString csv = m_dir.filePath("table.csv");
    QFile f(csv);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x,y,kind\n");
    for (int i = 0; i < 20; ++i) f.write(QString("%1,%2,%3\n").arg(i).arg(i * 2).arg(i % 2 ? "b" : "a").toUtf8());
    f.close();
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.data.format = DataFormat::csv;
    c.data.root = csv.toStdString();
    c.model.kind = "mlp";
    m_window->settingsPanel()->setConfig(c);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    auto* table = m_window->dataPanel()->findChild<QTableWidget*>("tablePreview");
    QCOMPARE(table->columnCount(), 3);
    QCOMPARE(table->rowCount(), 12);  // the first rows
    QCOMPARE(table->horizontalHeaderItem(2)->text(), QString("kind"));
    m_window->settingsPanel()->applyFieldText("data.label_column", "species");
    QTRY_VERIFY_WITH_TIMEOUT(m_window->settingsPanel()->errorFor("data.label_column").contains("is not a column"),
                             kTimeout);
  }

  // data.corrections (the audit's review): the Data tab counts what changed,
  // the files stay; a class the data lacks is an error under the setting.
  void correctionsChangeTheDataTab() {
    const QString file = m_dir.filePath("corrections.csv");
    auto write = [&](const QString& text) {
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(text.toUtf8());
    };
    write("file,action,label\nblue/000.png,remove,\nred/001.png,relabel,green\nred/002.png,keep,\n");
    TrainConfig c = folderConfig("corrected");
    c.data.corrections = file.toStdString();
    m_window->settingsPanel()->setConfig(c);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    ui::DataPanel* data = m_window->dataPanel();
    QVERIFY2(data->preview().ok, qPrintable(data->preview().error));
    const auto bars = data->barValues();
    std::vector<double> total;  // training + test of each class: 40, 50, 60 before
    for (size_t k = 0; k < 3; ++k) total.push_back(bars[0][k] + bars[1][k]);
    QCOMPARE(total, (std::vector<double>{39, 51, 59}));
    QVERIFY(data->findChild<QLabel*>("dataSummary")->text().contains("1 files removed, 1 relabelled"));
    QVERIFY(QFile::exists(m_folder + "/blue/000.png"));
    write("file,action,label\nred/001.png,relabel,purple\n");
    m_window->dataPanel()->recheckRequested();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->settingsPanel()->errorFor("data.corrections").contains("\"purple\""), kTimeout);
    m_window->settingsPanel()->setConfig(folderConfig("preview"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->settingsPanel()->isValid(), kTimeout);
  }

  // Run > Audit data… (training-studio-cli audit in a process of its own),
  // then the review in the Audit tab: three red images filed as blue are
  // suspects suggested red; decisions go to the audit's corrections.csv at
  // once (the images stay), come back when the folder is opened again, and
  // "Train on corrected data" names the file in data.corrections, whose
  // effect the Data tab counts.
  void auditFromTheWindowWritesCorrections() {
    const QString root = m_dir.filePath("audited");
    makeFolder(root);
    for (int i = 0; i < 3; ++i)  // three red images filed as blue
      QVERIFY(QFile::rename(QString("%1/red/%2.png").arg(root).arg(i, 3, 10, QChar('0')),
                            QString("%1/blue/moved-%2.png").arg(root).arg(i)));
    TrainConfig c = folderConfig("audited");
    c.data.root = root.toStdString();
    c.train.epochs = 12;
    ui::AuditPanel* audit = m_window->auditPanel();
    QSignalSpy finished(audit, &ui::AuditPanel::finished);
    QVERIFY(audit->startAudit(c, 3));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
    QCOMPARE(finished.front().front().toInt(), 0);
    QTableWidget* table = audit->table();
    std::vector<int> moved;
    for (int row = 0; row < table->rowCount(); ++row)
      if (table->item(row, 1)->text().contains("moved-") && table->item(row, 2)->text() == "label") {
        moved.push_back(row);
        QCOMPARE(table->item(row, 3)->text(), QString("blue"));
        QCOMPARE(table->item(row, 4)->text(), QString("red"));
      }
    // The ones the seeded split left in training (two of the three here).
    QVERIFY2(moved.size() >= 2, qPrintable(audit->summary()));
    audit->decide(moved[0], "relabel");  // to the suggestion
    audit->decide(moved[1], "remove");
    QFile corrections(audit->correctionsFile());
    QVERIFY(corrections.open(QIODevice::ReadOnly));
    const QString text = corrections.readAll();
    QVERIFY2(text.contains(table->item(moved[0], 1)->text() + ",relabel,red"), qPrintable(text));
    QVERIFY2(text.contains(table->item(moved[1], 1)->text() + ",remove,"), qPrintable(text));
    QVERIFY(QFile::exists(table->item(moved[1], 1)->text()));
    QVERIFY(audit->openAudit(audit->auditFolder()));
    QCOMPARE(table->item(moved[0], 6)->text(), QString("relabel to red"));
    QCOMPARE(table->item(moved[1], 6)->text(), QString("remove"));
    m_window->settingsPanel()->setConfig(c);
    QTest::mouseClick(audit->findChild<QPushButton*>("auditTrain"), Qt::LeftButton);
    QCOMPARE(QString::fromStdString(m_window->settingsPanel()->config().data.corrections), audit->correctionsFile());
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->dataPanel()->findChild<QLabel*>("dataSummary")->text().contains("1 files removed, 1 relabelled"),
        kTimeout);
  }

  // Issue 60, item 2: a file listed twice (a label issue and a copy of a
  // test file): R on one row, then K on the other, left "keep" in
  // corrections.csv while the first row still said "relabel to red", and the
  // header counted files as rows. One decision per file, on every row of it.
  void anAuditDecisionIsTheFilesOnEveryRow() {
    const QString dir = m_dir.filePath("twice-audit");
    QVERIFY(QDir().mkpath(dir));
    const QString file = m_dir.filePath("twice/blue/7.png"), test = m_dir.filePath("twice/test/7.png");
    const auto write = [&](const QString& name, const QString& text) {
      writeFileAtomically((dir + "/" + name).toStdString(), text.toStdString());
    };
    write("audit.json", R"({"classes": ["blue", "red"], "metric": "accuracy", "accuracy": {"mean": 0.9, "std": 0.1}})");
    write("label_issues.csv", "file,given,suggested,self_confidence,nearest,nearest_similarity\n" + file +
                                  ",blue,red,0.02,,\n" + m_dir.filePath("twice/blue/8.png") + ",blue,red,0.03,,\n");
    write("duplicates.csv", "first,second,similarity,kind\n" + file + "," + test + ",0.9966130256,train-test\n");
    ui::AuditPanel panel;
    QVERIFY(panel.openAudit(dir));
    QTableWidget* table = panel.table();
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 1)->text(), file);
    QCOMPARE(table->item(2, 1)->text(), file);
    QCOMPARE(table->item(2, 5)->text(), QString("0.997: 7.png"));  // not 0.9966130256 (issue 60, minor)
    panel.decide(0, "relabel");
    QCOMPARE(table->item(2, 6)->text(), QString("relabel to red"));  // shown on its copy's row too
    panel.decide(2, "keep");
    QCOMPARE(table->item(0, 6)->text(), QString("keep"));
    QCOMPARE(table->item(2, 6)->text(), QString("keep"));
    QVERIFY2(panel.summary().contains("2 of 3 listed decided, 1 files"), qPrintable(panel.summary()));
    const QString written = QString::fromStdString(test::readText(panel.correctionsFile().toStdString()));
    QCOMPARE(written, "file,action,label\n" + file + ",keep,\n");
    // As written, so as shown when the audit is opened again.
    QVERIFY(panel.openAudit(dir));
    QCOMPARE(table->item(0, 6)->text(), QString("keep"));
    QCOMPARE(table->item(1, 6)->text(), QString());
  }

  void modelTabListsTheLayers() {
    m_window->settingsPanel()->setConfig(folderConfig("model"));
    QTableWidget* layers = m_window->modelPanel()->table();
    QTRY_VERIFY2_WITH_TIMEOUT(layers->rowCount() == 10,  // conv, bn, relu, pool x2, flatten, linear
                              qPrintable(m_window->modelPanel()->findChild<QLabel*>("modelHead")->text()), 20000);
    QCOMPARE(layers->item(9, 1)->text(), QString("Linear"));
    QCOMPARE(layers->item(9, 2)->text(), QString("[2, 3]"));
    QCOMPARE(layers->item(0, 2)->text(), QString("[2, 8, 16, 16]"));
    QCOMPARE(layers->item(7, 2)->text(), QString("[2, 16, 4, 4]"));
  }

  // Issue 25: a torchvision backbone from a state dict, its layers' fine-tune
  // plan in the Model tab, and the unfreeze marked on the curves.
  void aBackboneFineTunesWithItsUnfreezeMarked() {
    const QString weights = m_dir.filePath("resnet18.pth");
    QProcess p;
    p.start(std::getenv("STUDIO_PYTHON"),
            {"-c",
             "import sys, torch, torchvision; "
             "torch.save(torchvision.models.resnet18(weights=None).state_dict(), sys.argv[1])",
             weights});
    QVERIFY(p.waitForFinished(test::kHangLimitMs) && p.exitCode() == 0);
    TrainConfig c = folderConfig("finetune");
    c.model.kind = "resnet18";
    c.model.weights = weights.toStdString();
    c.data.image_size = {64, 64};  // layer4 then has 2x2 values per channel for a last batch of one
    c.train.finetune.freeze_epochs = 1;
    c.train.finetune.backbone_lr_factor = 0.1;
    m_window->settingsPanel()->setConfig(c);
    QTableWidget* layers = m_window->modelPanel()->table();
    QTRY_VERIFY2_WITH_TIMEOUT(layers->rowCount() == 10 && !layers->isColumnHidden(4),
                              qPrintable(m_window->modelPanel()->findChild<QLabel*>("modelHead")->text()), 20000);
    QCOMPARE(layers->item(9, 0)->text(), QString("fc"));
    QCOMPARE(layers->item(9, 4)->text(), QString("trains, lr x1 (head)"));
    // Groups conv1, bn1, layer1 ... layer4, fc: layer1's factor is 0.1^(4/6).
    QCOMPARE(layers->item(4, 0)->text(), QString("layer1"));
    QCOMPARE(layers->item(4, 4)->text(), QString("frozen in epoch 1, lr x0.215"));
    QVERIFY(m_window->modelPanel()->findChild<QLabel*>("modelHead")->text().contains("starts from"));
    // Issue 40, item 5: the column follows edits of the plan at once (it kept "frozen in epoch 1, lr x0.1"),
    // and the footer says how many parameters the head-only epochs train.
    m_window->settingsPanel()->editField("train.finetune.freeze_epochs", "2");
    m_window->settingsPanel()->editField("train.finetune.backbone_lr_factor", "0.01");
    QTRY_COMPARE_WITH_TIMEOUT(layers->item(4, 4)->text(), QString("frozen in epochs 1-2, lr x0.0464"), kTimeout);
    const QString totals = m_window->modelPanel()->findChild<QLabel*>("modelTotals")->text();
    QVERIFY2(totals.contains(QRegularExpression("\\b1,?539 of them in epoch 1")),
             qPrintable(totals));  // fc: 512 x 3 + 3
    m_window->settingsPanel()->setConfig(c);
    QTRY_COMPARE_WITH_TIMEOUT(layers->item(4, 4)->text(), QString("frozen in epoch 1, lr x0.215"), kTimeout);
    const RunSummary r = runToEnd(c);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QTRY_VERIFY(chart(ui::PlotsPanel::Loss)->markerLabels().contains("unfreeze"));
  }

  // Issue 25: the augmentation preview draws the first images through the
  // chosen augmentations, and again when they change.
  void augmentationPreviewFollowsTheSettings() {
    TrainConfig c = folderConfig("augment");
    m_window->settingsPanel()->setConfig(c);
    ui::AugmentPreviewView* view = m_window->dataPanel()->augmentPreview();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(view->note().contains("no augmentation"), kTimeout);
    QCOMPARE(view->imageCount(), 0);
    m_window->settingsPanel()->applyFieldText("data.augment_rotation", "30");
    QTRY_VERIFY_WITH_TIMEOUT(view->imageCount() == 3 * 6 && view->note().contains("rotation"), kTimeout);
    m_window->settingsPanel()->applyFieldText("data.augment_brightness", "0.4");
    QTRY_VERIFY_WITH_TIMEOUT(view->note().contains("colour jitter"), kTimeout);
    QCOMPARE(view->imageCount(), 3 * 6);
    // MixUp acts on whole batches: the preview says so beside the images (issue 40, item 15).
    m_window->settingsPanel()->applyFieldText("data.augment_mixup", "true");
    QTRY_VERIFY_WITH_TIMEOUT(view->note().contains("then MixUp blends each training batch"), kTimeout);
    QCOMPARE(view->imageCount(), 3 * 6);
  }

  void torchScriptIsTrustedBeforeItRuns() {
    const QString models = m_dir.filePath("models");
    QProcess p;
    p.start(std::getenv("STUDIO_PYTHON"),
            {QString(std::getenv("STUDIO_TEST_SCRIPTS")) + "/make_torchscript_models.py", models, "4", "3"});
    QVERIFY(p.waitForFinished(test::kHangLimitMs) && p.exitCode() == 0);
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "torchscript";
    c.model.kind = "torchscript";
    c.model.path = (models + "/cnn.ts").toStdString();
    c.train.max_steps = 3;
    m_window->settingsPanel()->setConfig(c);
    const QString sha = QString::fromStdString(sha256OfFile(c.model.path));
    // The Model tab does not run it unasked.
    QTRY_VERIFY_WITH_TIMEOUT(m_window->modelPanel()->findChild<QPushButton*>("trustModel")->isHidden() == false,
                             kTimeout);
    QCOMPARE(m_window->modelPanel()->table()->rowCount(), 0);
    // Start asks; "no" starts nothing.
    QStringList asked;
    m_window->setTrustPrompt([&](const QString& path, const QString& s) {
      asked << path + " " + s;
      return false;
    });
    QVERIFY(!m_window->startRun());
    QCOMPARE(asked.size(), 1);
    QVERIFY(asked.front().contains(sha));
    QVERIFY(m_window->lastMessage().contains("was not trusted"));
    QVERIFY(!m_window->controller()->active());
    // "Yes" runs it, and is remembered for this file.
    m_window->setTrustPrompt([&](const QString&, const QString&) { return true; });
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
    QCOMPARE(statusName(finished.front().front().value<RunSummary>().status), std::string("completed"));
    QVERIFY(m_window->isTrusted(sha));
    // Issue 29, item 4: trusting the file at Start reaches the Model tab,
    // which then follows every model setting: the built-in cnn, and back.
    QTRY_VERIFY_WITH_TIMEOUT(m_window->modelPanel()->table()->rowCount() > 0, kTimeout);
    QVERIFY(m_window->modelPanel()->findChild<QPushButton*>("trustModel")->isHidden());
    const int fileLayers = m_window->modelPanel()->table()->rowCount();
    const QString fileTotals = m_window->modelPanel()->totalsText();
    m_window->settingsPanel()->editField("model.kind", "cnn");
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->modelPanel()->totalsText() != fileTotals && m_window->modelPanel()->table()->rowCount() > 0,
        kTimeout);
    const QString builtIn = m_window->modelPanel()->totalsText();
    m_window->settingsPanel()->editField("model.width", "64");
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->modelPanel()->totalsText() != builtIn && m_window->modelPanel()->table()->rowCount() > 0, kTimeout);
    m_window->settingsPanel()->editField("model.kind", "torchscript");
    QTRY_VERIFY_WITH_TIMEOUT(m_window->modelPanel()->totalsText() == fileTotals, kTimeout);
    QCOMPARE(m_window->modelPanel()->table()->rowCount(), fileLayers);
    m_window->setTrustPrompt([&](const QString&, const QString&) -> bool { qFatal("asked twice"); });
    m_window->modelPanel()->trustRequested(QString::fromStdString(c.model.path));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->modelPanel()->table()->rowCount() == 10, kTimeout);
  }

  void evaluationTabShowsARun() {
    TrainConfig c = folderConfig("eval");
    c.evaluation.every_steps = 4;
    const RunSummary r = runToEnd(c);
    QCOMPARE(statusName(r.status), std::string("completed"));
    m_firstRun = QDir(QString::fromStdString(r.runDir)).absolutePath();
    ui::EvaluationPanel* eval = m_window->evaluationPanel();
    // It followed the live run to its last evaluation.
    QTRY_VERIFY(eval->report() && eval->report()->step == r.steps);
    QCOMPARE(eval->stepChooser()->count(), static_cast<int>(ui::evaluationSteps(m_firstRun).size()));
    QVERIFY(eval->stepChooser()->count() >= 3);
    const auto counts = eval->drawnMatrix();
    double total = 0, diagonal = 0;
    for (size_t t = 0; t < counts.size(); ++t)
      for (size_t p = 0; p < counts.size(); ++p) {
        total += counts[t][p];
        if (t == p) diagonal += counts[t][p];
      }
    QCOMPARE(total, 37.0);  // the test images
    QCOMPARE(diagonal / total, r.test.figures["eval_accuracy"]);
    eval->setRowNormalized(true);
    for (const auto& row : eval->drawnMatrix()) {
      double sum = 0;
      for (double v : row) sum += v;
      QVERIFY(std::fabs(sum - 1.0) < 1e-9);
    }
    eval->setRowNormalized(false);
    QCOMPARE(eval->classTable()->rowCount(), 3);
    QCOMPARE(eval->classTable()->item(2, 0)->text(), QString("red"));
    // Issue 26: each class's ROC and PR curves, and the reliability diagram.
    QCOMPARE(eval->classificationViews()->count(), 3);
    ui::LabelsView* curves = eval->classCurvesView();
    QCOMPARE(curves->labelTable()->rowCount(), 3);
    QCOMPARE(curves->labelTable()->item(1, 0)->text(), QString("green"));
    QCOMPARE(static_cast<size_t>(curves->rocPointsDrawn()), eval->report()->perClass[0].roc.size());
    QVERIFY(curves->rocPointsDrawn() >= 2);
    int64_t binned = 0;
    for (int64_t n : eval->report()->reliability.count) binned += n;
    QCOMPARE(binned, int64_t(37));  // every test image in a confidence bin
    QVERIFY(eval->calibrationView()->barsDrawn() >= 1);
    // The records of a run that ended before the window heard it start come
    // after showRun listed its evaluations: the tab stays on the newest (it
    // went back to the first and stopped following, 1 run in 10 or so).
    eval->showRun(m_firstRun, "eval");
    QCOMPARE(eval->report()->step, r.steps);
    for (int64_t s : ui::evaluationSteps(m_firstRun)) eval->evaluationArrived(m_firstRun, s);
    QCOMPARE(eval->report()->step, r.steps);
    QCOMPARE(eval->stepChooser()->count(), static_cast<int>(ui::evaluationSteps(m_firstRun).size()));
    // An older evaluation, chosen from the list.
    eval->stepChooser()->setCurrentIndex(0);
    eval->stepChooser()->activated(0);
    QCOMPARE(eval->report()->step, int64_t(4));
    // Export carries the evaluations and the classes.
    QString error;
    const QStringList files = m_window->exportRunTo(m_firstRun, m_dir.filePath("export"), &error);
    QVERIFY2(!files.isEmpty(), qPrintable(error));
    QVERIFY(files.contains(m_dir.filePath("export") + "/classes.json"));
    QVERIFY(files.contains(m_dir.filePath("export") + "/eval/step-4.json"));
    QVERIFY(files.contains(m_dir.filePath("export") + "/preprocessing.json"));
    // The Export dialog offers the run's weights (issue 60: it offered no
    // choice): its test figures', the best checkpoint's, the last; each is
    // exported as chosen.
    QVERIFY(QFile::exists(m_firstRun + "/checkpoints/best.ckpt"));
    std::vector<std::string> which;
    for (const auto& [label, w] : ui::exportWeightChoices(m_firstRun)) which.push_back(w);
    QCOMPARE(which, (std::vector<std::string>{"auto", "best", "last"}));
    for (const char* w : {"best", "last"}) {
      ExportOptions options;
      options.which.setName(w);
      const QString out = m_dir.filePath(QString("export-%1").arg(w));
      QVERIFY2(!m_window->exportRunTo(m_firstRun, out, &error, options).isEmpty(), qPrintable(error));
      const auto pre = nlohmann::json::parse(test::contents(out + "/preprocessing.json").toStdString());
      QCOMPARE(pre.value("weights", std::string()), std::string(w));
    }
  }

  // Issue 26: a regression's evaluation shows predicted against actual, the
  // residuals' histogram and each target's figures, live; the Data tab names
  // the targets, the Runs list its best R².
  void evaluationTabShowsARegression() {
    const QString table = m_dir.filePath("prices.csv");
    {
      QFile f(table);
      QVERIFY(f.open(QIODevice::WriteOnly));
      QTextStream out(&f);
      out << "area,rooms,price\n";
      for (int i = 0; i < 120; ++i) {
        const double area = 30 + (i * 37) % 90, rooms = 1 + (i * 7) % 5;
        out << area << "," << rooms << "," << (1000 * area + 5000 * rooms + (i % 7) * 300) << "\n";
      }
    }
    const TrainConfig c = tableConfig("prices", "regression", table);
    m_window->settingsPanel()->setConfig(c);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dataChecked(), kTimeout);
    const ui::DataPreview& preview = m_window->dataPanel()->preview();
    QVERIFY2(preview.ok, qPrintable(preview.error));
    QCOMPARE(preview.description.targetNames, std::vector<std::string>{"price"});
    QCOMPARE(preview.description.testSize(), int64_t(30));
    const RunSummary r = runToEnd(c);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QVERIFY(std::isfinite(r.test.figures["eval_r2"]));
    QVERIFY(std::isnan(r.test.figures["eval_accuracy"]));
    ui::EvaluationPanel* eval = m_window->evaluationPanel();
    QTRY_VERIFY(eval->report() && eval->report()->step == r.steps);
    QVERIFY(eval->showsRegression());
    QCOMPARE(eval->report()->task.name(), std::string("regression"));
    QCOMPARE(eval->report()->r2, r.test.figures["eval_r2"]);
    ui::RegressionView* view = eval->regressionView();
    QCOMPARE(view->pointsDrawn(), 30);  // the test rows
    double counted = 0;
    for (double n : view->residualCounts()) counted += n;
    QCOMPARE(counted, 30.0);
    QCOMPARE(view->targetTable()->rowCount(), 1);
    QCOMPARE(view->targetTable()->item(0, 0)->text(), QString("price"));
    QCOMPARE(view->targetChooser()->currentText(), QString("price"));
    // Back to a classification run: its page again.
    eval->showRun(m_firstRun, "eval");
    QVERIFY(!eval->showsRegression());
    QVERIFY(eval->report()->task == TaskKind::classification);
  }

  // A multi-label evaluation: each label's figures and curves.
  void evaluationTabShowsALabelsRun() {
    const QString table = m_dir.filePath("tagged.csv");
    {
      QFile f(table);
      QVERIFY(f.open(QIODevice::WriteOnly));
      QTextStream out(&f);
      out << "x,y,tags\n";
      for (int i = 0; i < 120; ++i) {
        const int x = (i * 37) % 100, y = (i * 53) % 100;
        out << x << "," << y << "," << (x > 50 ? (y > 50 ? "warm|wet" : "warm") : (y > 50 ? "wet" : "cold")) << "\n";
      }
    }
    const TrainConfig c = tableConfig("tags", "multilabel", table);
    const RunSummary r = runToEnd(c);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QVERIFY(std::isfinite(r.test.figures["eval_map"]));
    ui::EvaluationPanel* eval = m_window->evaluationPanel();
    QTRY_VERIFY(eval->report() && eval->report()->step == r.steps);
    QVERIFY(eval->showsLabels());
    QCOMPARE(eval->report()->map, r.test.figures["eval_map"]);
    ui::LabelsView* view = eval->labelsView();
    QCOMPARE(view->labelTable()->rowCount(), 3);
    QCOMPARE(view->labelTable()->item(0, 0)->text(), QString("cold"));
    QCOMPARE(static_cast<size_t>(view->prPointsDrawn()), eval->report()->labels[0].pr.size());
    QVERIFY(view->rocPointsDrawn() >= 2);
    view->labelChooser()->setCurrentIndex(2);
    QCOMPARE(static_cast<size_t>(view->rocPointsDrawn()), eval->report()->labels[2].roc.size());
  }

  void mistakesAreShownWithTheirClasses() {
    // A run too short to learn makes mistakes to show.
    TrainConfig c = folderConfig("short");
    c.train.max_steps = 1;
    c.optimizer.lr = 1e-6;
    const RunSummary r = runToEnd(c);
    m_window->runsPanel()->refresh();
    m_window->runsPanel()->selectRuns({QDir(QString::fromStdString(r.runDir)).absolutePath()});
    ui::EvaluationPanel* eval = m_window->evaluationPanel();
    QTRY_VERIFY(eval->report().has_value());
    QVERIFY(eval->mistakesShown() > 0);
    QVERIFY(!eval->report()->thumbnails.empty());
    // Two runs: compared class by class.
    m_window->runsPanel()->selectRuns({m_firstRun, QDir(QString::fromStdString(r.runDir)).absolutePath()});
    QCOMPARE(eval->comparisonTable()->columnCount(), 3);  // class, and one column per run
    QCOMPARE(eval->comparisonTable()->rowCount(), 4);     // 3 classes and all
  }

  void badRunFoldersAreListedNotFatal() {
    // Run folders edited by hand: wrong types, and a settings.json that is not JSON.
    const QString runs = m_dir.filePath("runs");
    QDir().mkpath(runs + "/20260101-000000-typed");
    QDir().mkpath(runs + "/20260101-000001-garbage");
    auto write = [](const QString& path, const QByteArray& text) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    };
    write(runs + "/20260101-000000-typed/settings.json",
          R"({"name": 5, "model": {"kind": 3, "width": "wide"}, "run_info": {"total_steps": "many", "device": 1}})");
    write(runs + "/20260101-000000-typed/summary.json", R"({"status": 3, "steps": "many", "test_accuracy": "high"})");
    write(runs + "/20260101-000001-garbage/settings.json", "{ not json");
    m_window->runsPanel()->setRunsDir(runs);
    m_window->runsPanel()->refresh();
    QStringList statuses;
    for (int i = 0; i < m_window->runsPanel()->list()->topLevelItemCount(); ++i)
      statuses << m_window->runsPanel()->list()->topLevelItem(i)->text(2);
    QVERIFY2(statuses.contains("unreadable"), qPrintable(statuses.join(",")));
    QVERIFY2(statuses.contains("?"), qPrintable(statuses.join(",")));
    // Selecting them draws nothing and says why, without ending the window.
    m_window->runsPanel()->selectRuns({runs + "/20260101-000001-garbage"});
    QVERIFY(m_window->lastMessage().contains("metrics.csv"));
  }

  void statusBarShowsTheLoadingPhase() {
    ui::RunStatusBar* bar = m_window->runStatusBar();
    Progress p;
    p.state = SessionState::Starting;
    p.phase = "decoding images";
    p.phaseDone = 30;
    p.phaseTotal = 60;
    bar->showProgress(p, nullptr, 0);
    QCOMPARE(bar->loadingText(), QString("decoding images 30/60"));
    p.state = SessionState::Running;
    p.phase.clear();
    bar->showProgress(p, nullptr, 0);
    QCOMPARE(bar->loadingText(), QString());
  }

  void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestDataViews)
#include "test_data_views.moc"
