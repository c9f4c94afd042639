// The window as a new user meets it (issue 40, "The window, tried a third
// time"): each test builds its own window and data, makes one journey a
// person makes, and asserts what the window shows at its steps:
//  - the command line's --set changes the settings the window opened on,
//    not the default preset (item 17);
//  - the loss chart's axis names the run's loss (MSE for a regression), and
//    each run's when two runs of different losses are compared (item 8); a
//    chart's own Save as has the export's size and caption (item 13);
//  - Start with a past run selected: the Runs list's highlight moves to the
//    live run (item 11), and its test report is the Evaluation tab's last
//    word (item 16);
//  - the epoch's progress bar is as wide as its words at 1280x720 (item 12),
//    and the Settings form runs that window's height (issue 60, item 12);
//  - two queued items say what tells them apart (item 14);
//  - a past run selected draws its own learning-rate plan (item 6).
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QListWidget>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeWidget>

#include <qcustomplot.h>

#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/lr_schedule.h"
#include "test_support.h"
#include "ui/charts/chart_legend.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/evaluation/evaluation_panel.h"
#include "ui/runs/queue_panel.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_status_bar.h"

using namespace studio;

namespace {
constexpr int kTimeout = test::kHangLimitMs;

// A table whose target is a sum of its two columns, for a quick regression.
QString regressionTable(const QString& dir) {
  std::string csv = "a,b,y\n";
  for (int i = 0; i < 200; ++i) {
    const double a = (i * 37 % 101) / 10.0, b = (i * 53 % 97) / 10.0;
    csv += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(2 * a + b) + "\n";
  }
  const QString path = dir + "/sum.csv";
  writeFileAtomically(path.toStdString(), csv);
  return path;
}

RunSummary train(TrainConfig c) {
  Session s;
  s.start(c);
  return test::runToEnd(s);
}
}  // namespace

class TestWindowJourneys : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // training-studio --set KEY=VALUE: the change applies to the settings the
  // window opened on (the remembered ones), where it replaced them with the
  // default preset before; --preset and --config still choose a start.
  void theCommandLinesSetChangesWhatTheWindowHolds() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig held = window.settingsPanel()->config();
    held.optimizer.lr = 0.0123;
    held.name = "mine";
    window.settingsPanel()->setConfig(held, "remembered");
    QString why;
    QVERIFY2(window.openWith(QString(), QString(), {"train.epochs=7"}, &why), qPrintable(why));
    const TrainConfig after = window.settingsPanel()->config();
    QCOMPARE(after.train.epochs, 7);
    QCOMPARE(after.optimizer.lr, 0.0123);
    QCOMPARE(after.name, std::string("mine"));
    QVERIFY(window.openWith("fashion-mnist-mlp", QString(), {"train.epochs=2"}, &why));
    QCOMPARE(window.settingsPanel()->config().model.kind, std::string("mlp"));
    QCOMPARE(window.settingsPanel()->config().train.epochs, 2);
    QVERIFY(!window.openWith("nope", QString(), {}, &why));
    QVERIFY2(why.contains("unknown preset \"nope\""), qPrintable(why));
    QCOMPARE(window.settingsPanel()->config().model.kind, std::string("mlp"));  // as it was
  }

  // The loss axis says what the loss is: MSE for a regression trained with
  // it (it said "cross-entropy" for every run), each run's when they differ.
  void theLossAxisNamesEachRunsLoss() {
    QTemporaryDir dir;
    TrainConfig r = test::smallConfig(dir.path() + "/runs");
    r.name = "sum";
    r.data.format = DataFormat::csv;
    r.data.root = regressionTable(dir.path()).toStdString();
    r.task.kind = TaskKind::regression;
    r.model.kind = "mlp";
    r.model.width = 8;
    const RunSummary regression = train(r);
    QCOMPARE(statusName(regression.status), std::string("completed"));
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.model.kind = "mlp";
    c.model.width = 8;
    const RunSummary classification = train(c);
    QCOMPARE(statusName(classification.status), std::string("completed"));

    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    ui::MetricChart* loss = window.plotsPanel()->chart(ui::PlotsPanel::Loss);
    window.showRuns({QString::fromStdString(regression.runDir)});
    QCOMPARE(loss->yLabel(), QString("MSE"));
    window.showRuns({QString::fromStdString(classification.runDir)});
    QCOMPARE(loss->yLabel(), QString("cross-entropy"));
    window.showRuns({QString::fromStdString(regression.runDir), QString::fromStdString(classification.runDir)});
    QVERIFY2(loss->yLabel().contains("MSE") && loss->yLabel().contains("cross-entropy"), qPrintable(loss->yLabel()));
    // The evaluation chart names the shown runs' figures, from the catalog
    // (issue 60, minor: a detector's run read "Evaluation accuracy · R²").
    ui::MetricChart* score = window.plotsPanel()->chart(ui::PlotsPanel::Accuracy);
    QCOMPARE(score->title(), QString("Evaluation R\u00b2 · accuracy"));
    QCOMPARE(score->yLabel(), QString("R\u00b2 or accuracy"));
    window.showRuns({QString::fromStdString(classification.runDir)});
    QCOMPARE(score->title(), QString("Evaluation accuracy"));
    QCOMPARE(ui::scoreChartText({"detection"}).first, QString("Evaluation mAP"));
    QCOMPARE(ui::scoreChartText({"multilabel"}).second, QString("accuracy, mAP or F1"));

    // A chart's own Save as PNG: the export's size and its captions (it wrote 380x170, uncaptioned).
    window.showRuns({QString::fromStdString(regression.runDir)});
    const QString png = dir.path() + "/loss.png";
    QVERIFY(loss->saveAsShown(png));
    QCOMPARE(QImage(png).size(), window.chartExportSize());
    QVERIFY2(loss->savedCaption().contains(QDir(QString::fromStdString(regression.runDir)).dirName()),
             qPrintable(loss->savedCaption()));
    // Never into a FIFO (it would wait for a reader) or through a link (issue 41, item 5).
    const QString fifo = dir.path() + "/chart.fifo";
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0644), 0);
    QVERIFY(!loss->saveAsShown(fifo));
    QVERIFY(QFileInfo(fifo).exists() && !QFileInfo(fifo).isFile());
    QVERIFY(QFile::link(dir.path() + "/elsewhere.png", dir.path() + "/link.png"));
    QVERIFY(!loss->saveAsShown(dir.path() + "/link.png"));
    QVERIFY(!QFile::exists(dir.path() + "/elsewhere.png"));
  }

  // A past run selected, then Start: the list's highlight moves to the new
  // live run, whose curves the charts show (it stayed on the past run).
  void theRunsListFollowsTheLiveRun() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.model.kind = "mlp";
    c.model.width = 8;
    const RunSummary past = train(c);
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    window.runsPanel()->setRunsDir(dir.path() + "/runs");
    window.runsPanel()->selectRuns({QString::fromStdString(past.runDir)});
    QCOMPARE(window.runsPanel()->selectedRuns(), QStringList{QString::fromStdString(past.runDir)});
    c.name = "next";
    window.settingsPanel()->setConfig(c);
    QSignalSpy finished(&window, &ui::MainWindow::runFinished);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->runDir().isEmpty(), kTimeout);
    const QString live = QDir(window.controller()->runDir()).absolutePath();
    QTRY_COMPARE_WITH_TIMEOUT(window.runsPanel()->selectedRuns(), QStringList{live}, kTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
    // Its test report is the Evaluation tab's last word, without selecting the run again (issue 40, item 16).
    QTRY_VERIFY_WITH_TIMEOUT(window.evaluationPanel()->report() && window.evaluationPanel()->report()->split == "test",
                             kTimeout);
  }

  // The epoch's progress bar is as wide as its words at 1280x720, so its
  // chunk never covers them ("epoch 1│2: 14/34").
  void theEpochBarFitsItsText() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    window.resize(1280, 720);
    window.show();
    auto* status = window.findChild<ui::RunStatusBar*>();
    QVERIFY(status);
    status->setStepsPerEpoch(12345);
    Progress p;
    p.state = SessionState::Running;
    p.step = 4321;
    p.totalSteps = 98765;
    status->showProgress(p, nullptr, 0);
    auto* bar = status->findChild<QProgressBar*>("epochProgress");
    QVERIFY(bar && bar->isVisible());
    QCOMPARE(status->epochText(), QString("epoch 1: 4321/12345 steps"));
    QTRY_VERIFY2(bar->width() >= bar->fontMetrics().horizontalAdvance(bar->text()) + 16,
                 qPrintable(QString("%1 px for %2").arg(bar->width()).arg(bar->text())));
    // A long phase is cut to its bar, never widening the window past the screen.
    p.state = SessionState::Starting;
    p.phase = std::string(200, 'x');
    p.phaseDone = 123456;
    p.phaseTotal = 654321;
    status->showProgress(p, nullptr, 0);
    QVERIFY2(window.minimumSizeHint().width() <= 1280, qPrintable(QString::number(window.minimumSizeHint().width())));
    QVERIFY(status->loadingText().endsWith(QString::fromUtf8("…")));
  }

  // Issue 60, item 12: at 1280x720 the Settings form runs the window's
  // height. Before, the bottom docks took about 220 px under it (12 rows of
  // settings, 7 with the Search dock open). The bottom docks share one tab
  // group beside it, the Runs list raised; a taller window keeps them side
  // by side under the form.
  void theFormRunsALowWindowsHeight() {
    ui::MainWindow low(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    low.resize(1280, 720);
    low.show();
    auto* settings = low.findChild<QDockWidget*>("settingsDock");
    auto* runs = low.findChild<QDockWidget*>("runsDock");
    auto* log = low.findChild<QDockWidget*>("logDock");
    auto* search = low.findChild<QDockWidget*>("searchDock");
    QVERIFY(settings && runs && log && search);
    QTRY_VERIFY(runs->isVisible() && settings->isVisible());
    QVERIFY(low.tabifiedDockWidgets(runs).contains(log));
    const int bottom = low.runStatusBar()->geometry().top();
    QTRY_VERIFY2(settings->geometry().bottom() >= bottom - 12 && settings->geometry().bottom() > runs->geometry().top(),
                 qPrintable(QString("the form ends at %1 px, the Runs dock starts at %2, the status bar at %3")
                                .arg(settings->geometry().bottom())
                                .arg(runs->geometry().top())
                                .arg(bottom)));
    const int formHeight = settings->height();
    search->raise();  // the Search tab shown: the form keeps its height
    QTRY_VERIFY(search->isVisible());
    QApplication::processEvents();
    QCOMPARE(settings->height(), formHeight);
    QVERIFY2(low.minimumSizeHint().width() <= 1280, qPrintable(QString::number(low.minimumSizeHint().width())));

    ui::MainWindow tall(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    tall.resize(1600, 1000);
    tall.show();
    auto* tallRuns = tall.findChild<QDockWidget*>("runsDock");
    QTRY_VERIFY(tallRuns->isVisible());
    QVERIFY(!tall.tabifiedDockWidgets(tallRuns).contains(tall.findChild<QDockWidget*>("logDock")));
  }

  // Two queued items that differ in train.epochs say so in "Settings given"
  // (the column was empty for items added from the form).
  void queuedItemsSayWhatTellsThemApart() {
    QTemporaryDir dir;
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.model.kind = "mlp";
    window.settingsPanel()->setConfig(c);
    window.runsPanel()->setRunsDir(dir.path() + "/runs");
    window.queuePanel()->setQueueFile(window.runsPanel()->queueFile());
    c.train.epochs = 2;
    window.settingsPanel()->setConfig(c);
    QVERIFY(window.addToQueue());
    // One item alone: the settings it gives beside the defaults, the first few (issue 60, item 12: empty).
    window.queuePanel()->refresh();
    const QString alone = window.queuePanel()->list()->topLevelItem(0)->text(3);
    const QString all = window.queuePanel()->list()->topLevelItem(0)->toolTip(3);
    QVERIFY2(alone.contains("=") && alone.contains("more"), qPrintable(alone));
    QVERIFY2(all.contains("model.kind=mlp") && all.contains("train.epochs=2") && !all.startsWith("name=") &&
                 !all.contains("\nname="),
             qPrintable(all));
    c.train.epochs = 3;
    window.settingsPanel()->setConfig(c);
    QVERIFY(window.addToQueue());
    window.queuePanel()->refresh();
    QTreeWidget* list = window.queuePanel()->list();
    QCOMPARE(list->topLevelItemCount(), 2);
    QCOMPARE(list->topLevelItem(0)->text(3), QString("train.epochs=2"));
    QCOMPARE(list->topLevelItem(1)->text(3), QString("train.epochs=3"));
  }

  // A past run selected draws its own plan (its rate and length), whatever
  // the form holds, and keeps it while the form is edited (the form's plan
  // was drawn against it: another rate, another length).
  void aPastRunsPlanIsItsOwn() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.model.kind = "mlp";
    c.model.width = 8;
    c.schedule.kind = ScheduleKind::cosine;
    c.optimizer.lr = 0.07;
    const RunSummary past = train(c);
    QCOMPARE(statusName(past.status), std::string("completed"));
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig form = c;
    form.optimizer.lr = 0.5;
    form.train.epochs = 3;
    window.settingsPanel()->setConfig(form);
    window.showRuns({QString::fromStdString(past.runDir)});
    ui::MetricChart* lr = window.plotsPanel()->chart(ui::PlotsPanel::LearningRate);
    const LrSchedule own(c.schedule, c.optimizer.lr, past.steps);
    auto drawnIsOwn = [&] {
      const ui::PlotSeries* plan = lr->series("preview/lr");
      if (!plan || plan->empty() || plan->x.back() != static_cast<double>(past.steps)) return false;
      for (size_t i = 0; i < plan->size(); ++i)
        if (std::abs(plan->y[i] - own.lr(static_cast<int64_t>(plan->x[i]) - 1)) > 1e-12) return false;
      return true;
    };
    QVERIFY(drawnIsOwn());
    QVERIFY2(lr->title().contains(QString("this run's plan: %1 steps").arg(past.steps)), qPrintable(lr->title()));
    window.settingsPanel()->editField("optimizer.lr", "0.9");
    QTest::qWait(300);  // the form's plan is made again after edits settle
    QVERIFY(drawnIsOwn());
    QVERIFY2(lr->title().contains("this run's plan"), qPrintable(lr->title()));
  }

  // Item 9: two runs compared at 1280x720 leave the charts room: the loss
  // chart's legend lists each run once (it listed six entries, most of the
  // chart), the Runs list shows five rows or more, and the Search dock,
  // shown, takes a third of the height or more (150 px before: unreadable).
  void twoRunsComparedAt720pxLeaveTheChartsRoom() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.model.kind = "mlp";
    c.model.width = 8;
    c.name = "first";
    const RunSummary a = train(c);
    c.name = "second";
    c.optimizer.lr = 0.02;
    const RunSummary b = train(c);
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    window.resize(1280, 720);
    window.move(0, 0);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.runsPanel()->setRunsDir(dir.path() + "/runs");
    window.runsPanel()->selectRuns({QString::fromStdString(a.runDir), QString::fromStdString(b.runDir)});
    ui::MetricChart* loss = window.plotsPanel()->chart(ui::PlotsPanel::Loss);
    loss->refreshNow();
    QCPLegend* legend = loss->plot()->legend;
    QTRY_COMPARE(legend->itemCount(), 2);
    QStringList entries;
    for (int i = 0; i < legend->itemCount(); ++i) entries << ui::legendText(legend->item(i));
    entries.sort();
    QCOMPARE(entries, (QStringList{"first", "second"}));
    QVERIFY2(legend->outerRect().height() * 4 <= loss->plot()->height(),
             qPrintable(QString("legend %1 px of %2").arg(legend->outerRect().height()).arg(loss->plot()->height())));
    // A run's entry hides and shows all its curves (raw, smoothed, evaluations).
    auto* entry = qobject_cast<QCPPlottableLegendItem*>(legend->item(0));
    QVERIFY(entry);
    QTest::mouseClick(loss->plot(), Qt::LeftButton, {}, legend->item(0)->outerRect().center());
    QSet<QString> hiddenRuns;
    int hidden = 0;
    for (const QString& key : loss->seriesKeys())
      if (!loss->seriesShown(key)) {
        ++hidden;
        hiddenRuns << key.section('/', 0, -2);
      }
    QVERIFY2(hidden >= 3 && hiddenRuns.size() == 1, qPrintable(QStringList(hiddenRuns.values()).join(", ")));
    QTest::mouseClick(loss->plot(), Qt::LeftButton, {}, legend->item(0)->outerRect().center());
    for (const QString& key : loss->seriesKeys()) QVERIFY2(loss->seriesShown(key), qPrintable(key));
    // Issue 60, item 5: two runs compared kept the form's plan in the
    // learning-rate chart's title ("plan: N steps"), though no plan is drawn
    // beside several runs; one run shown again has its own.
    ui::MetricChart* lr = window.plotsPanel()->chart(ui::PlotsPanel::LearningRate);
    QVERIFY(!lr->series("preview/lr") || lr->series("preview/lr")->empty());
    QVERIFY2(lr->title().contains("no plan beside several runs"), qPrintable(lr->title()));
    QVERIFY2(!lr->title().contains("plan:"), qPrintable(lr->title()));
    // The form edited while two runs are compared, then one of them selected:
    // that one is selected and shown. The list shows a folder set apart from
    // the form's output.dir (as Recent runs or --compare set it); any edit of
    // the form sent the list back to output.dir's folder, which holds
    // neither run, so nothing was selected (issue 60). It follows a change
    // of output.dir only.
    window.settingsPanel()->editField("optimizer.lr", "0.03");
    QCoreApplication::processEvents();
    window.runsPanel()->selectRuns({QString::fromStdString(a.runDir)});
    QVERIFY2(window.runsPanel()->selectedRuns() == QStringList{QDir(QString::fromStdString(a.runDir)).absolutePath()},
             qPrintable("selected: " + window.runsPanel()->selectedRuns().join(", ")));
    QTRY_VERIFY2(lr->title().contains(QString("this run's plan: %1 steps").arg(a.steps)), qPrintable(lr->title()));

    QTreeWidget* runs = window.runsPanel()->list();
    const int rowHeight = runs->visualItemRect(runs->topLevelItem(0)).height();
    QVERIFY2(runs->viewport()->height() >= 5 * rowHeight,
             qPrintable(QString("%1 px for rows of %2").arg(runs->viewport()->height()).arg(rowHeight)));

    auto* search = window.findChild<QDockWidget*>("searchDock");
    search->raise();
    QTRY_VERIFY2(search->height() >= window.height() / 3,
                 qPrintable(QString("Search dock %1 px of %2").arg(search->height()).arg(window.height())));
  }

  // Item 9: at 1280x720 every tab fits the window: opening one does not grow
  // the window past the screen (the Data tab grew it to 704 px at y = 20).
  void everyTabFitsA720pxScreen() {
    // An image folder at 64 px with augmentations: the Data tab's samples and its augmentation preview.
    QTemporaryDir dir;
    for (int k = 0; k < 3; ++k) {
      const QString folder = dir.path() + "/photos/class" + QString::number(k);
      QDir().mkpath(folder);
      for (int i = 0; i < 12; ++i) {
        Image img{64, 64, 3, std::vector<uint8_t>(64 * 64 * 3, static_cast<uint8_t>(40 + 60 * k + i))};
        writePngFile((folder + QString("/%1.png").arg(i)).toStdString(), img);
      }
    }
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig c = test::smallConfig(dir.path() + "/runs");
    c.data.format = DataFormat::image_folder;
    c.data.root = (dir.path() + "/photos").toStdString();
    c.data.train_limit = 0;
    c.data.test_limit = 0;
    c.data.augment_flip = true;
    c.data.augment_rotation = 15;
    window.settingsPanel()->setConfig(c);
    window.resize(1280, 720);
    window.move(0, 0);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.dataChecked(), kTimeout);
    QTest::qWait(500);  // the augmentation preview draws
    for (int i = 0; i < window.tabs()->count(); ++i) {
      window.tabs()->setCurrentIndex(i);
      QApplication::processEvents();
      QTest::qWait(50);
      // Room for a title bar and a desktop's panel on a 720 px screen: the window's minimum at most 600 px.
      QVERIFY2(window.height() <= 720 && window.minimumSizeHint().height() <= 600,
               qPrintable(QString("%1: window %2 px, its minimum %3 px")
                              .arg(window.tabs()->tabText(i))
                              .arg(window.height())
                              .arg(window.minimumSizeHint().height())));
    }
  }
};

QTEST_MAIN(TestWindowJourneys)
#include "test_window_journeys.moc"
