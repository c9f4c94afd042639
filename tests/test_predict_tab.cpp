// The Predict tab (ui/predict/predict_panel.h) driven offscreen as a person would:
// a finished run selected in the Runs list becomes its model, a folder of
// images dropped on the tab is predicted (each file a row with its class and
// confidence, the class folders' accuracy), the rows sort by confidence and
// filter by class, the selected image gets its Grad-CAM overlay, whose
// opacity slider changes the picture, and Save CSV writes what
// training-studio-cli predict writes. A paused live run predicts with its
// current weights. A table's rows are predicted alike,
// a selected row showing which features weighed most (gradient x input).
// (A detector's run, which shows its boxes: test_box_views.)
#include <QtTest/QtTest>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDropEvent>
#include <QMimeData>
#include <QSignalSpy>
#include <QSlider>
#include <QTabWidget>
#include <QTableWidget>

#include "studio/file_io.h"
#include "studio/idx_file.h"
#include "studio/image_file.h"
#include "test_support.h"
#include "ui/predict/predict_panel.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "window_suite.h"

using namespace studio;

namespace {
constexpr int kTimeout = test::kHangLimitMs;
constexpr int kImages = 60;

// A quick MLP on a CSV table, its task and target columns as given, trained to its end.
RunSummary trainTable(const QString& runs, const QString& table, const std::string& task = "classification",
                      const std::vector<std::string>& targets = {}) {
  TrainConfig c = test::smallConfig(runs);
  c.data.format = DataFormat::csv;
  c.data.root = table.toStdString();
  c.task.kind.setName(task);
  c.data.target_columns = targets;
  c.model.kind = "mlp";
  c.model.width = 16;
  c.train.epochs = 4;
  Session s;
  s.start(c);
  return test::runToEnd(s);
}
}  // namespace

class TestPredictTab : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_run, m_photos;
  int m_count = 0;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // A quick run on Fashion-MNIST, and some of its test images as class folders.
    Session s;
    s.start(test::smallConfig(m_dir.path() + "/runs"));
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    m_run = QString::fromStdString(r.runDir);
    const auto classes = nlohmann::json::parse(test::readText(r.runDir + "/settings.json"))["run_info"]["classes"]
                             .get<std::vector<std::string>>();
    const std::string root = "/usr/share/datasets/fashion-mnist/";
    const IdxArray images = readIdxFile(root + "t10k-images-idx3-ubyte.gz", 3);
    const IdxArray labels = readIdxFile(root + "t10k-labels-idx1-ubyte.gz", 1);
    m_photos = m_dir.path() + "/photos";
    // ("T-shirt/top" cannot name a folder: its images are left out.)
    for (int i = 0; m_count < kImages; ++i) {
      const QString name = QString::fromStdString(classes[labels.data[static_cast<size_t>(i)]]);
      if (name.contains('/')) continue;
      ++m_count;
      const QString dir = m_photos + "/" + name;
      QDir().mkpath(dir);
      Image img{28, 28, 1, {images.data.begin() + i * 784, images.data.begin() + (i + 1) * 784}};
      writePngFile(QString("%1/%2.png").arg(dir).arg(i).toStdString(), img);
    }
  }

  void aDroppedFolderIsPredictedSortedFilteredAndSaved() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    ui::PredictPanel* panel = window.predictPanel();
    QVERIFY(panel);
    QCOMPARE(window.tabs()->tabText(window.tabs()->indexOf(panel)), QString("Predict"));
    // The run selected in the Runs list is the model.
    window.runsPanel()->setRunsDir(m_dir.path() + "/runs");
    window.showRuns({m_run});
    Q_EMIT window.runsPanel()->showRequested({m_run});
    QCOMPARE(panel->modelFolder(), m_run);
    panel->setWeights("last");

    // A folder dropped on the tab.
    window.tabs()->setCurrentWidget(panel);
    window.show();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(m_photos)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(panel, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(panel, &drop);
    QVERIFY(panel->busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QVERIFY2(panel->report().has_value(), qPrintable(panel->statusText()));
    QTableWidget* table = panel->table();
    QCOMPARE(table->rowCount(), kImages);
    QCOMPARE(panel->report()->labelled, int64_t(kImages));
    QVERIFY2(panel->statusText().contains("accuracy"), qPrintable(panel->statusText()));

    // Sorted by confidence, most confident first; then the other way.
    auto confidences = [&] {
      std::vector<double> v;
      for (int i = 0; i < table->rowCount(); ++i) v.push_back(table->item(i, 2)->data(Qt::UserRole).toDouble());
      return v;
    };
    auto c = confidences();
    QVERIFY(std::is_sorted(c.rbegin(), c.rend()));
    QVERIFY(c.front() > c.back());
    QCOMPARE(table->item(0, 2)->text(), QString("%1 %").arg(100 * c.front(), 0, 'f', 1));
    table->sortByColumn(2, Qt::AscendingOrder);
    c = confidences();
    QVERIFY(std::is_sorted(c.begin(), c.end()));

    // Filtered by the predicted class: only its rows show.
    const QString cls = table->item(0, 1)->text();
    auto* filter = panel->findChild<QComboBox*>("predictFilter");
    filter->setCurrentIndex(filter->findData(cls));
    int shown = 0;
    for (int i = 0; i < table->rowCount(); ++i)
      if (!table->isRowHidden(i)) {
        ++shown;
        QCOMPARE(table->item(i, 1)->text(), cls);
      }
    QCOMPARE(panel->visibleRows(), shown);
    QVERIFY(shown > 0 && shown < kImages);
    panel->setClassFilter("");
    QCOMPARE(panel->visibleRows(), kImages);

    // The selected image's Grad-CAM; the slider blends it in.
    table->selectRow(3);
    QTRY_VERIFY_WITH_TIMEOUT(!panel->camBusy() && panel->gradCam().has_value(), kTimeout);
    QCOMPARE(panel->gradCam()->heat.size(), size_t(28 * 28));
    panel->opacitySlider()->setValue(0);
    const QImage plain = panel->shownImage();
    panel->opacitySlider()->setValue(80);
    const QImage blended = panel->shownImage();
    QCOMPARE(plain.size(), QSize(28, 28));
    QVERIFY(plain != blended);
    // With no overlay the picture is the image itself.
    const auto& cam = *panel->gradCam();
    QCOMPARE(qGray(plain.pixel(14, 14)), static_cast<int>(cam.image[14 * 28 + 14]));

    // Averaged with the mirror images: other probabilities, the same files.
    const std::vector<float> plainProbabilities = panel->report()->probabilities;
    // Choosing it predicts the rows listed again (nothing else to press).
    panel->setTestTimeAugmentation("flip");
    QVERIFY(panel->busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QCOMPARE(panel->report()->rows.size(), size_t(kImages));
    QVERIFY(panel->report()->probabilities != plainProbabilities);
    // Five crops take images larger than the input only: these 28x28 ones are
    // each refused, with the reason in their row.
    panel->setTestTimeAugmentation("five-crop");
    QVERIFY(panel->busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QCOMPARE(panel->report()->skipped, int64_t(kImages));
    QVERIFY2(panel->statusText().contains("none of the 60 inputs predicted") &&
                 panel->statusText().contains("not larger than the model's input"),
             qPrintable(panel->statusText()));
    QVERIFY2(table->item(0, 5)->text().contains("not larger than the model's input"),
             qPrintable(table->item(0, 5)->text()));
    panel->setTestTimeAugmentation("none");
    QVERIFY(panel->busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QCOMPARE(panel->report()->skipped, int64_t(0));

    // Saved as the CLI writes it: a header and one line per file.
    const QString csv = m_dir.path() + "/tab.csv";
    QVERIFY(panel->saveCsv(csv));
    const auto lines = test::readLines(csv.toStdString());
    QCOMPARE(lines.size(), size_t(kImages + 1));
    QVERIFY(lines[0].rfind("source,label,class_1,probability_1", 0) == 0);
  }

  void aTablesRowsAndWhatWeighedMost() {
    // A table whose class is which of two columns is larger; a third is noise.
    std::string csv = "left,right,noise,side\n";
    for (int i = 0; i < 300; ++i) {
      const double l = (i * 37 % 101) / 10.0, r = (i * 53 % 97) / 10.0, n = (i * 11 % 7) / 10.0;
      csv += std::to_string(l) + "," + std::to_string(r) + "," + std::to_string(n) + "," + (l > r ? "L" : "R") + "\n";
    }
    const QString table = m_dir.path() + "/sides.csv";
    writeFileAtomically(table.toStdString(), csv);
    const RunSummary r = trainTable(m_dir.path() + "/table-runs", table);
    QCOMPARE(statusName(r.status), std::string("completed"));
    ui::PredictPanel panel;
    panel.setModelFolder(QString::fromStdString(r.runDir));
    panel.setWeights("last");
    panel.predictPaths({table});
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), kTimeout);
    QVERIFY2(panel.report().has_value(), qPrintable(panel.statusText()));
    QCOMPARE(panel.table()->rowCount(), 300);
    QCOMPARE(panel.table()->item(0, 0)->toolTip().left(4), QString("row "));
    panel.table()->selectRow(0);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.camBusy() && panel.attribution().has_value(), kTimeout);
    QCOMPARE(panel.attribution()->values.size(), size_t(3));
    QVERIFY2(panel.explanation().contains("gradient × input") && panel.explanation().contains("left"),
             qPrintable(panel.explanation()));
  }

  // A regression's and a multi-label model's tables: each row's values, or its
  // labels at their thresholds and the labels' probabilities; a selected row
  // weighs its features for a target or a label (the window crashed here,
  // indexing the classes such a model does not have). Two tables predicted at
  // once keep every row's values and features.
  void regressionAndMultiLabelTables() {
    std::string regression = "a,b,noise,y\n", tags = "a,b,noise,hot,cold\n";
    for (int i = 0; i < 240; ++i) {
      const double a = (i * 37 % 101) / 10.0, b = (i * 53 % 97) / 10.0, n = (i * 11 % 7) / 10.0;
      regression += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(n) + "," +
                    std::to_string(3 * a - b) + "\n";
      tags += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(n) + "," + (a > 5 ? "1" : "0") + "," +
              (b > 5 ? "1" : "0") + "\n";
    }
    const QString regressionCsv = m_dir.path() + "/y.csv", tagsCsv = m_dir.path() + "/tags.csv";
    writeFileAtomically(regressionCsv.toStdString(), regression);
    writeFileAtomically(tagsCsv.toStdString(), tags);
    for (const bool labels : {false, true}) {
      const RunSummary r = labels ? trainTable(m_dir.path() + "/tag-runs", tagsCsv, "multilabel", {"hot", "cold"})
                                  : trainTable(m_dir.path() + "/y-runs", regressionCsv, "regression");
      QCOMPARE(statusName(r.status), std::string("completed"));
      ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
      ui::PredictPanel* panel = window.predictPanel();
      panel->setModelFolder(QString::fromStdString(r.runDir));
      panel->setWeights("last");
      const QString table = labels ? tagsCsv : regressionCsv;
      panel->predictPaths({table, table});
      QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
      QVERIFY2(panel->report().has_value(), qPrintable(panel->statusText()));
      const PredictionReport& report = *panel->report();
      QCOMPARE(panel->table()->rowCount(), 480);
      QCOMPARE(report.values.size(), size_t(480 * (labels ? 2 : 1)));
      QCOMPARE(report.features.size(), size_t(480 * 3));
      // Each row shows what the CLI's predict writes for it.
      const PredictionReport cli = Predictor(r.runDir, {.which = WeightsChoice::last}).predict(table.toStdString());
      QCOMPARE(cli.values.size(), size_t(240 * (labels ? 2 : 1)));
      const int k = panel->table()->item(0, 0)->data(Qt::UserRole + 1).toInt() % 240;
      const QString shown = panel->table()->item(0, 1)->text();
      if (labels) {
        QStringList want;
        for (size_t j = 0; j < 2; ++j)
          if (cli.values[static_cast<size_t>(k) * 2 + j] >= cli.thresholds[j])
            want << QString::fromStdString(cli.targets[j]);
        QCOMPARE(shown, want.join("|"));
        auto* filter = panel->findChild<QComboBox*>("predictFilter");
        QCOMPARE(filter->count(), 3);  // all, hot, cold
        filter->setCurrentIndex(filter->findData("hot"));
        for (int i = 0; i < panel->table()->rowCount(); ++i)
          if (!panel->table()->isRowHidden(i)) QVERIFY(panel->table()->item(i, 1)->text().split('|').contains("hot"));
        QVERIFY(panel->visibleRows() > 0 && panel->visibleRows() < 480);
        filter->setCurrentIndex(0);
      } else {
        QCOMPARE(shown, QString::number(static_cast<double>(cli.values[static_cast<size_t>(k)]), 'g', 6));
      }
      panel->table()->selectRow(0);
      QTRY_VERIFY_WITH_TIMEOUT(!panel->camBusy() && panel->attribution().has_value(), kTimeout);
      QCOMPARE(panel->attribution()->values.size(), size_t(3));
      const std::string output = panel->attribution()->output;
      QVERIFY2(labels ? (output == "hot" || output == "cold") : output == "y", output.c_str());
      QVERIFY2(panel->explanation().contains("What weighed most for " + QString::fromStdString(output)),
               qPrintable(panel->explanation()));
      QVERIFY(!panel->opacitySlider()->isVisibleTo(panel));  // no Grad-CAM for a table
      test::screenshotAt720(window, panel, labels ? "predict-multilabel-table" : "predict-regression-table");
      const QString saved = m_dir.path() + (labels ? "/tags-out.csv" : "/y-out.csv");
      QVERIFY(panel->saveCsv(saved));
      QCOMPARE(test::readLines(saved.toStdString()).size(), size_t(481));
    }
  }

  // The live run, paused: its current weights predict (its last checkpoint
  // is written first).
  void aPausedRunPredictsWithItsCurrentWeights() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig c = test::smallConfig(m_dir.path() + "/live-runs");
    c.name = "live";
    c.train.epochs = 40;
    window.settingsPanel()->setConfig(c);
    QSignalSpy finished(&window, &ui::MainWindow::runFinished);
    QVERIFY(window.startRun());
    ui::RunController* run = window.controller();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 4, kTimeout);
    run->pause();
    QTRY_COMPARE_WITH_TIMEOUT(run->state(), SessionState::Paused, kTimeout);
    const QString dir = run->runDir();
    const QString last = dir + "/checkpoints/last.ckpt";
    const QDateTime before = QFileInfo(last).lastModified();  // null when it has none yet
    QTest::qWait(50);
    ui::PredictPanel* panel = window.predictPanel();
    panel->setModelFolder(dir);
    panel->predictPaths({m_photos});
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QVERIFY2(panel->report().has_value(), qPrintable(panel->statusText()));
    QCOMPARE(panel->report()->weights, std::string("last"));
    QVERIFY(QFileInfo(last).lastModified() > before || (before.isNull() && QFile::exists(last)));
    QCOMPARE(run->state(), SessionState::Paused);  // it stays paused
    run->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
  }

  // A TorchScript model runs its code: the window asks first, as at Start.
  void aTorchScriptModelIsTrustedFirst() {
    const QString folder = m_dir.path() + "/scripted-run";
    test::copyTree(m_run + "/checkpoints", folder + "/checkpoints");
    auto settings = nlohmann::json::parse(test::readText((m_run + "/settings.json").toStdString()));
    settings["model"]["kind"] = "torchscript";
    settings["model"]["path"] = (folder + "/net.ts").toStdString();
    writeFileAtomically((folder + "/settings.json").toStdString(), settings.dump());
    writeFileAtomically((folder + "/net.ts").toStdString(), "not really TorchScript");
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    QStringList asked;
    bool answer = false;
    window.setTrustPrompt([&](const QString& path, const QString&) {
      asked << path;
      return answer;
    });
    ui::PredictPanel* panel = window.predictPanel();
    panel->setModelFolder(folder);
    panel->predictPaths({m_photos});
    QCOMPARE(asked, QStringList{folder + "/net.ts"});
    QVERIFY(!panel->busy());
    QVERIFY2(panel->statusText().contains("not trusted"), qPrintable(panel->statusText()));
    answer = true;
    panel->predictPaths({m_photos});
    QCOMPARE(asked.size(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
    QVERIFY2(panel->statusText().contains("net.ts"), qPrintable(panel->statusText()));  // not a model: said
    panel->predictPaths({m_photos});
    QCOMPARE(asked.size(), 2);  // trusted once is trusted
    QTRY_VERIFY_WITH_TIMEOUT(!panel->busy(), kTimeout);
  }

  void withoutAModelItSaysWhatToDo() {
    ui::PredictPanel panel;
    panel.predictPaths({m_photos});
    QVERIFY(!panel.busy());
    QVERIFY(panel.statusText().contains("Choose the model first"));
    panel.setModelFolder(m_dir.path() + "/nowhere");
    panel.predictPaths({m_photos});
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), kTimeout);
    QVERIFY2(panel.statusText().contains("nowhere") && panel.statusText().contains("not found"),
             qPrintable(panel.statusText()));
  }
};

QTEST_MAIN(TestPredictTab)
#include "test_predict_tab.moc"
