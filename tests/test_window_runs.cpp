// The window on past runs: export, reopening and overlaying runs from disk,
// resume, continue and fork from the Runs list, the queue, and the Runs
// table's comparisons. Each test opens its own window and makes the runs it
// reads (tests/window_suite.h).
#include <QtTest/QtTest>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QToolButton>
#include <QTreeWidget>

#include <qcustomplot.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "studio/dataset_info.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "studio/run_queue.h"
#include "test_support.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/common/theme.h"
#include "ui/runs/run_catalog.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/help_dialog.h"
#include "ui/window/log_panel.h"
#include "ui/window/lr_find_dialog.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_status_bar.h"
#include "ui/window/run_toolbar.h"
#include "window_suite.h"

using namespace studio;
using test::countRows;
using test::kWindowTimeout;
using ui::MetricChart;
using ui::PlotsPanel;

class TestWindowRuns : public test::WindowSuite {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { setUpSuite(); }
  void init() { openWindow(); }
  void cleanup() { closeWindow(); }

  void exportWritesEveryFile() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    const QString out = m_dir.filePath("export");
    QString error;
    const QStringList files = m_window->exportRunTo(stopped, out, &error);
    QVERIFY2(!files.isEmpty(), qPrintable(error));
    QStringList expected = {"model.pt", "checkpoint.ckpt", "settings.json", "metrics.csv"};
    for (const char* chartName :
         {"loss", "accuracy", "learning_rate", "throughput", "memory", "grad_norm", "loss_scale", "utilisation"})
      expected << QString(chartName) + ".png" << QString(chartName) + ".pdf";
    for (const QString& name : expected) {
      QFileInfo f(out + "/" + name);
      QVERIFY2(f.exists() && f.size() > 0, qPrintable(name));
      QVERIFY2(files.contains(out + "/" + name), qPrintable(name));
    }
    QCOMPARE(QImage(out + "/loss.png").size(), QSize(1200, 700));
    // The CSV is the run's, byte for byte.
    QFile a(out + "/metrics.csv"), b(stopped + "/metrics.csv");
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QCOMPARE(a.readAll(), b.readAll());
    // A run folder that is not one: an error naming it.
    QVERIFY(m_window->exportRunTo(m_dir.filePath("no-such-run"), out, &error).isEmpty());
    QVERIFY2(error.contains("no-such-run"), qPrintable(error));
  }

  // Issue 44: the window's Export offers ONNX and INT8; the files come
  // with their checks, whose lines the window shows.
  void exportToOnnxChecksEveryFile() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    const QString out = m_dir.filePath("export-onnx");
    ExportOptions options;
    options.format = ExportFormat::onnx;
    options.quantize = ExportQuantize::int8;
    options.calibrationExamples = 64;
    QString error;
    QStringList checks;
    const QStringList files = m_window->exportRunTo(stopped, out, &error, options, &checks);
    QVERIFY2(!files.isEmpty(), qPrintable(error));
    for (const char* name : {"model.onnx", "model.int8.onnx", "export.json", "README.md"})
      QVERIFY2(files.contains(out + "/" + name), name);
    QVERIFY2(checks.filter("model.onnx").size() == 1 && checks.filter("largest difference").size() >= 3,
             qPrintable(checks.join("\n")));
    QVERIFY2(checks.filter("int8:").size() == 4, qPrintable(checks.join("\n")));  // figure, two speeds, speed-up
    const auto report = nlohmann::json::parse(readFileBytes((out + "/export.json").toStdString(), "export"));
    QVERIFY(report.at("passed").get<bool>());
  }

  // Issue 9, item 3: exported charts are drawn at the chosen size, with the
  // run's name and settings under them and without the crosshair read-out,
  // which also goes when the mouse leaves or other runs are shown.
  void exportedChartsCarryTheRunAndNoCrosshair() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    m_window->runsPanel()->selectRuns({stopped});
    MetricChart* loss = chart(PlotsPanel::Loss);
    loss->refreshNow();
    QCustomPlot* plot = loss->plot();
    // The mouse moving over the plot, as the window system delivers it.
    const auto hover = [plot](QPoint at) {
      QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(plot->mapToGlobal(at)), Qt::NoButton, Qt::NoButton,
                       Qt::NoModifier);
      QApplication::sendEvent(plot, &move);
    };
    hover(plot->axisRect()->rect().center());
    QTRY_VERIFY(loss->crosshairShown());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(plot, &leave);
    QVERIFY(!loss->crosshairShown());
    hover(plot->axisRect()->rect().center() + QPoint(3, 0));
    QTRY_VERIFY(loss->crosshairShown());
    m_window->setChartExportSize(QSize(1600, 900));
    const QString out = m_dir.filePath("export-sized");
    QString error;
    QVERIFY2(!m_window->exportRunTo(stopped, out, &error).isEmpty(), qPrintable(error));
    QVERIFY(!loss->crosshairShown());
    const QImage with(out + "/loss.png");
    QCOMPARE(with.size(), QSize(1600, 900));
    // The caption is drawn: the same chart saved without it differs.
    QVERIFY(loss->savePng(m_dir.filePath("bare-loss.png"), 1600, 900));
    QVERIFY(with != QImage(m_dir.filePath("bare-loss.png")));
    QCOMPARE(QImage(out + "/accuracy.png").size(), QSize(1600, 900));
    m_window->setChartExportSize(QSize(1200, 700));
    hover(plot->axisRect()->rect().center());
    QTRY_VERIFY(loss->crosshairShown());
    m_window->plotsPanel()->showRuns({});  // other runs (none) shown: the read-out was of curves now gone
    QVERIFY(!loss->crosshairShown());
  }

  void openingARunRedrawsItsCsv() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    m_window->plotsPanel()->showRuns({});
    QCOMPARE(points(PlotsPanel::Loss, stopped, "train_loss"), size_t{0});
    m_window->runsPanel()->selectRuns({stopped});
    QCOMPARE(m_window->plotsPanel()->runKeys(), QStringList{stopped});
    QCOMPARE(points(PlotsPanel::Loss, stopped, "train_loss"), countRows(stopped, RecordKind::Train, true));
    QCOMPARE(points(PlotsPanel::Accuracy, stopped, "eval_accuracy"), countRows(stopped, RecordKind::Eval));
    QVERIFY(points(PlotsPanel::Accuracy, stopped, "eval_accuracy") >= 1);
    QCOMPARE(chart(PlotsPanel::LearningRate)->markerCount(), 1);  // the change, from the CSV
  }

  void overlayOfTwoRunsShowsTwoSeries() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    const QString shortDir = shortRun();  // completed, or empty
    QVERIFY(!shortDir.isEmpty());

    m_window->runsPanel()->refresh();
    m_window->runsPanel()->selectRuns({stopped, shortDir});
    QCOMPARE(m_window->plotsPanel()->runKeys().size(), 2);
    int lossSeries = 0;
    for (const QString& key : chart(PlotsPanel::Loss)->seriesKeys())
      if (key.endsWith("/train_loss_smooth")) ++lossSeries;
    QCOMPARE(lossSeries, 2);
    QCOMPARE(points(PlotsPanel::Loss, shortDir, "train_loss"), size_t{12});  // a record per step
    QVERIFY(chart(PlotsPanel::Loss)->plot()->legend->visible());
    // Each run's legend entry names it, short enough to be read whole (runs
    // of different names: the name alone).
    QStringList names;
    for (int i = 0; i < chart(PlotsPanel::Loss)->plot()->graphCount(); ++i)
      names << chart(PlotsPanel::Loss)->plot()->graph(i)->name();
    QCOMPARE(names.filter(QRegularExpression("^long: train \\(smoothed\\)$")).size(), 1);
    QCOMPARE(names.filter(QRegularExpression("^short: train \\(smoothed\\)$")).size(), 1);
  }

  void resumeFromTheRunsList() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    const int64_t stoppedAt = ui::readRunInfo(stopped).steps;
    QVERIFY(stoppedAt > 0);
    m_window->setStopAtStep(stoppedAt + 10);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    m_window->runsPanel()->selectRuns({stopped});
    m_window->runsPanel()->findChild<QPushButton*>("resumeRun")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    m_window->setStopAtStep(0);
    const auto s = finished.front().front().value<RunSummary>();
    QCOMPARE(statusName(s.status), std::string("stopped"));
    QCOMPARE(s.steps, stoppedAt + 10);
    // The curves hold the steps from before the resume and after it.
    const ui::PlotSeries* loss = chart(PlotsPanel::Loss)->series(stopped + "/train_loss");
    QVERIFY(loss);
    QCOMPARE(loss->x.front(), 1.0);
    QCOMPARE(loss->x.back(), double(stoppedAt + 10));
    QCOMPARE(loss->size(), countRows(stopped, RecordKind::Train, true));
  }

  // Issue 9, item 4: Resume shows the run at once: its own settings in the
  // form (locked while it runs), its plan, and its history, before any new
  // record; then its curves go on without a repeated step.
  void resumeShowsTheRunAtOnce() {
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "resumed-at-once";
    c.optimizer.lr = 0.0777;
    c.schedule.kind = ScheduleKind::cosine;
    m_window->settingsPanel()->setConfig(c);
    m_window->setStopAtStep(6);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    m_window->setStopAtStep(0);
    const QString run =
        QDir(QString::fromStdString(finished.front().front().value<RunSummary>().runDir)).absolutePath();
    QCOMPARE(statusName(finished.front().front().value<RunSummary>().status), std::string("stopped"));
    TrainConfig other = test::smallConfig(m_dir.filePath("runs"));
    other.name = "something-else";
    other.optimizer.lr = 0.5;
    m_window->settingsPanel()->setConfig(other);
    m_window->plotsPanel()->showRuns({});

    // The stopped run's rows, counted before it resumes: once resumed, its
    // engine thread may write new ones before the next line here (under
    // ThreadSanitizer on a loaded machine it had written up to step 10).
    const size_t history = countRows(run, RecordKind::Train, true);
    QCOMPARE(history, size_t(6));
    m_window->setStopAtStep(10);
    QVERIFY(m_window->resumeRun(run));
    // Before the event loop runs again: the history is drawn, nothing new has arrived yet.
    ui::SettingsPanel* s = m_window->settingsPanel();
    QCOMPARE(s->config().name, std::string("resumed-at-once"));
    QCOMPARE(s->config().optimizer.lr, 0.0777);
    QVERIFY(!s->editor("optimizer.lr")->isEnabled());
    QCOMPARE(points(PlotsPanel::Loss, run, "train_loss"), history);
    const ui::PlotSeries* plan = chart(PlotsPanel::LearningRate)->series("preview/lr");
    QVERIFY(plan && !plan->empty());
    QCOMPARE(plan->x.back(), 16.0);                      // the 16 steps planned
    QVERIFY(std::abs(plan->y.front() - 0.0777) < 1e-9);  // cosine from the run's rate, not the form's 0.5

    finished.clear();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    m_window->setStopAtStep(0);
    const ui::PlotSeries* loss = chart(PlotsPanel::Loss)->series(run + "/train_loss");
    QVERIFY(loss);
    QCOMPARE(loss->x.back(), 10.0);
    QCOMPARE(loss->size(), countRows(run, RecordKind::Train, true));  // no step twice
    for (size_t i = 1; i < loss->size(); ++i) QVERIFY(loss->x[i] > loss->x[i - 1]);
  }

  // Continue… and Fork… of the Runs dock (their dialogs answered): the
  // continued run's curves go on from its last step; the fork's are drawn
  // on from its parent's, and the Runs table names its parent and changes.
  void continueAndForkFromTheRunsList() {
    const QString shortDir = shortRun();
    QVERIFY(!shortDir.isEmpty());
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    m_window->runsPanel()->selectRuns({shortDir});
    QVERIFY(m_window->runsPanel()->findChild<QPushButton*>("continueRun")->isEnabled());
    QVERIFY(m_window->runsPanel()->findChild<QPushButton*>("forkRun")->isEnabled());
    ContinueOptions more;
    more.epochs = 1;
    more.schedule = ContinueSchedule::constant;
    QVERIFY(m_window->continueRun(shortDir, more));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    QCOMPARE(finished.front().front().value<RunSummary>().steps, int64_t(12 + 16));
    const ui::PlotSeries* loss = chart(PlotsPanel::Loss)->series(shortDir + "/train_loss");
    QVERIFY(loss);
    QCOMPARE(loss->x.front(), 1.0);
    QCOMPARE(loss->x.back(), 28.0);
    QCOMPARE(loss->size(), size_t{28});

    ForkOptions fork;
    fork.overrides = {"optimizer.lr=0.001", "train.epochs=3", "train.max_steps=40"};
    QVERIFY(m_window->forkRun(shortDir, fork));
    const QString forkDir = QDir(controller()->runDir()).absolutePath();
    QVERIFY(forkDir != shortDir);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kWindowTimeout);
    QCOMPARE(statusName(finished.back().front().value<RunSummary>().status), std::string("completed"));
    const ui::PlotSeries* forkLoss = chart(PlotsPanel::Loss)->series(forkDir + "/train_loss");
    QVERIFY(forkLoss);
    QCOMPARE(forkLoss->x.front(), 1.0);  // the parent's steps first
    QCOMPARE(forkLoss->x.back(), 40.0);
    QCOMPARE(forkLoss->size(), size_t{40});
    QCOMPARE(countRows(forkDir, RecordKind::Train), size_t{12});  // its own file holds its own steps

    m_window->runsPanel()->refresh();
    QTreeWidgetItem* row = nullptr;
    QTreeWidget* list = m_window->runsPanel()->list();
    for (int i = 0; i < list->topLevelItemCount(); ++i)
      if (list->topLevelItem(i)->data(0, Qt::UserRole).toString() == forkDir) row = list->topLevelItem(i);
    QVERIFY(row);
    const QString texts = [&] {
      QStringList t;
      for (int c = 0; c < list->columnCount(); ++c) t << row->text(c);
      return t.join(" | ");
    }();
    QVERIFY2(texts.contains(QFileInfo(shortDir).fileName() + " @ step 28"), qPrintable(texts));
    QVERIFY2(texts.contains("optimizer.lr 0.003 → 0.001"), qPrintable(texts));
    // Reopened from the list: the same curves.
    m_window->runsPanel()->selectRuns({forkDir});
    QCOMPARE(chart(PlotsPanel::Loss)->series(forkDir + "/train_loss")->size(), size_t{40});
  }

  // The Runs dock's Queue and Run queue on the runs folder's queue.json:
  // two queued runs listed greyed, then run one after another.
  void queueRunsOneAfterAnother() {
    const QString queueFile = m_window->runsPanel()->queueFile();
    QCOMPARE(queueFile, m_dir.filePath("runs") + "/queue.json");
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "queued-a";
    c.train.max_steps = 6;
    m_window->settingsPanel()->setConfig(c);
    m_window->runsPanel()->findChild<QPushButton*>("queueAdd")->click();
    c.name = "queued-b";
    c.optimizer.lr = 0.02;
    m_window->settingsPanel()->setConfig(c);
    m_window->runsPanel()->findChild<QPushButton*>("queueAdd")->click();
    QCOMPARE(m_window->runsPanel()->queuedCount(), 2);
    const int runsBefore = m_window->runsPanel()->runCount();

    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    m_window->runsPanel()->findChild<QPushButton*>("queueRun")->click();
    QVERIFY(m_window->queueRunning());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->queueRunning(), kWindowTimeout);
    const auto items = loadQueue(queueFile.toStdString());
    QCOMPARE(items.size(), size_t{2});
    for (const auto& i : items) {
      QCOMPARE(i.status.name(), std::string("done"));
      QVERIFY(QFile::exists(QString::fromStdString(i.runDir + "/summary.json")));
    }
    QCOMPARE(readRunSettingsName(items[1].runDir), std::string("queued-b"));
    QCOMPARE(m_window->runsPanel()->queuedCount(), 0);
    QCOMPARE(m_window->runsPanel()->runCount(), runsBefore + 2);

    // A queue file edited into nonsense: listed as unreadable, and Run queue
    // says why instead of running anything.
    std::ofstream(queueFile.toStdString(), std::ios::trunc) << "{ nonsense";
    m_window->runsPanel()->refresh();
    QVERIFY(!m_window->runQueue());
    QVERIFY2(m_window->lastMessage().contains("is not valid JSON"), qPrintable(m_window->lastMessage()));
    QFile::remove(queueFile);
  }

  // Issue 9 (run comparison): the runs table has a column for each setting
  // that differs between the runs listed, sorts numerically by any column,
  // keeps the person's title, tags and notes (notes.json, never written
  // through a link), compares two runs' settings side by side, and deletes
  // runs to the desktop's trash, which Undo delete brings back.
  void runsTableComparesAndManagesRuns() {
    const QString folder = m_dir.filePath("compare-runs");
    QStringList dirs;
    for (const auto& [name, lr, batch] : {std::tuple{"cmp-a", 0.003, 32}, std::tuple{"cmp-b", 0.01, 16}}) {
      TrainConfig c = test::smallConfig(folder);
      c.name = name;
      c.optimizer.lr = lr;
      c.train.batch_size = batch;
      c.train.max_steps = 3;
      m_window->settingsPanel()->setConfig(c);
      QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
      QVERIFY(m_window->startRun());
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
      dirs << QDir(QString::fromStdString(finished.front().front().value<RunSummary>().runDir)).absolutePath();
    }
    ui::RunsPanel* runs = m_window->runsPanel();
    runs->refresh();
    QCOMPARE(runs->runCount(), 2);
    const QStringList columns = runs->settingColumns();
    QVERIFY2(columns.contains("optimizer.lr") && columns.contains("train.batch_size"), qPrintable(columns.join(",")));
    QVERIFY(!columns.contains("name") && !columns.contains("output.dir") && !columns.contains("model.kind"));
    QTreeWidget* list = runs->list();
    const int lrColumn = [&] {
      for (int c = 0; c < list->columnCount(); ++c)
        if (list->headerItem()->text(c) == "optimizer.lr") return c;
      return -1;
    }();
    QVERIFY(lrColumn > 0);
    // Sorted by the learning rate, as numbers, either way.
    list->sortByColumn(lrColumn, Qt::AscendingOrder);
    QCOMPARE(list->topLevelItem(0)->text(lrColumn), QString("0.003"));
    list->sortByColumn(lrColumn, Qt::DescendingOrder);
    QCOMPARE(list->topLevelItem(0)->text(lrColumn), QString("0.01"));
    QCOMPARE(list->topLevelItem(0)->data(0, Qt::UserRole).toString(), dirs[1]);

    // Title, tags and notes.
    QVERIFY(runs->setRunNotes(dirs[0], "Baseline", {"baseline", " cpu "}, "first try"));
    const auto rowOf = [&](const QString& dir) -> QTreeWidgetItem* {
      for (int i = 0; i < list->topLevelItemCount(); ++i)
        if (list->topLevelItem(i)->data(0, Qt::UserRole).toString() == dir) return list->topLevelItem(i);
      return nullptr;
    };
    QCOMPARE(rowOf(dirs[0])->text(0), QString("Baseline"));
    QCOMPARE(rowOf(dirs[0])->text(9), QString("baseline, cpu"));
    QVERIFY(rowOf(dirs[0])->toolTip(0).contains("first try"));
    QCOMPARE(ui::readRunInfo(dirs[0]).tags, (QStringList{"baseline", "cpu"}));
    // A link planted where notes.json goes is replaced, never written through.
    const QString outside = m_dir.filePath("outside-notes.txt");
    { std::ofstream(outside.toStdString()) << "keep me"; }
    QVERIFY(QFile::link(outside, dirs[1] + "/notes.json"));
    QVERIFY(runs->setRunNotes(dirs[1], "Higher rate", {}, QString()));
    {
      QFile kept(outside);
      QVERIFY(kept.open(QIODevice::ReadOnly));
      QCOMPARE(kept.readAll(), QByteArray("keep me"));
    }
    QVERIFY(!QFileInfo(dirs[1] + "/notes.json").isSymLink());

    // Overlaid, each run's curves are named by its title; two of the same
    // title add when they started.
    runs->selectRuns(dirs);
    const auto smoothedNames = [this] {
      QStringList names;
      for (int i = 0; i < chart(PlotsPanel::Loss)->plot()->graphCount(); ++i)
        if (chart(PlotsPanel::Loss)->plot()->graph(i)->name().endsWith(": train (smoothed)"))
          names << chart(PlotsPanel::Loss)->plot()->graph(i)->name();
      names.sort();
      return names;
    };
    QCOMPARE(smoothedNames(), (QStringList{"Baseline: train (smoothed)", "Higher rate: train (smoothed)"}));
    QVERIFY(runs->setRunNotes(dirs[1], "Baseline", {}, QString()));
    runs->selectRuns(dirs);
    const QStringList twins = smoothedNames();
    QCOMPARE(twins.size(), 2);
    QVERIFY2(twins[0] != twins[1] && twins[0].startsWith("Baseline ") && twins[1].startsWith("Baseline "),
             qPrintable(twins.join(" | ")));
    QVERIFY(runs->setRunNotes(dirs[1], "Higher rate", {}, QString()));

    // The two runs' settings side by side: the rows that differ.
    runs->selectRuns(dirs);
    QVERIFY(runs->findChild<QPushButton*>("compareSettings")->isEnabled());
    QDialog* diff = runs->compareSelected();
    QVERIFY(diff && diff->objectName() == "settingsDiff");
    auto* table = diff->findChild<QTableWidget*>("settingsDiffTable");
    QCOMPARE(table->rowCount(), static_cast<int>(columns.size()));
    const int lrRow = static_cast<int>(columns.indexOf("optimizer.lr"));
    QStringList lrs{table->item(lrRow, 0)->text(), table->item(lrRow, 1)->text()};
    lrs.sort();
    QCOMPARE(lrs, (QStringList{"0.003", "0.01"}));
    diff->close();

    // Delete to the trash, and back.
    runs->selectRuns({dirs[1]});
    QVERIFY(runs->findChild<QPushButton*>("deleteRuns")->isEnabled());
    QString error;
    QVERIFY2(runs->deleteSelected(&error), qPrintable(error));
    QVERIFY(!QFileInfo::exists(dirs[1]));
    QCOMPARE(runs->runCount(), 1);
    QVERIFY(m_window->lastMessage().contains("trash"));
    QVERIFY(runs->findChild<QPushButton*>("undoDelete")->isEnabled());
    QVERIFY2(runs->undoDelete(&error), qPrintable(error));
    QVERIFY(QFileInfo::exists(dirs[1] + "/settings.json"));
    QCOMPARE(runs->runCount(), 2);
    QCOMPARE(ui::readRunInfo(dirs[1]).title, QString("Higher rate"));
    QVERIFY(!runs->canUndoDelete());
    QVERIFY(!runs->undoDelete(&error));
    m_window->settingsPanel()->setConfig(test::smallConfig(m_dir.filePath("runs")));
  }

  // Issue 30, item 5: a run killed before its first checkpoint (settings,
  // no checkpoint, no summary) can be resumed from the Runs list (from step
  // 0); a fork so killed cannot (it is forked again), nor a completed run.
  void anInterruptedRunWithoutACheckpointIsResumable() {
    QTemporaryDir dir;
    const QString run = dir.filePath("killed");
    QVERIFY(QDir().mkpath(run + "/checkpoints"));
    nlohmann::json settings = toJson(test::smallConfig(dir.path()));
    writeFileAtomically((run + "/settings.json").toStdString(), settings.dump());
    ui::RunInfo info = ui::readRunInfo(run);
    QCOMPARE(info.status, QString("interrupted"));
    QVERIFY(!info.hasCheckpoint);
    QVERIFY(info.resumable);
    settings["run_info"] = {{"parent", {{"run", "/runs/parent"}, {"checkpoint", "last"}, {"step", 4}}}};
    writeFileAtomically((run + "/settings.json").toStdString(), settings.dump());
    QVERIFY(!ui::readRunInfo(run).resumable);
    settings.erase("run_info");
    writeFileAtomically((run + "/settings.json").toStdString(), settings.dump());
    writeFileAtomically((run + "/summary.json").toStdString(), R"({"status": "completed"})");
    QVERIFY(!ui::readRunInfo(run).resumable);
  }

  // Issue 60, item 10: a second window listed a run that another process was
  // training as "interrupted", with Resume on (it would have trained twice),
  // and at "0 / N" steps though it had 48.
  void aRunTrainingInAnotherProcessIsNotResumable() {
    QTemporaryDir dir;
    const QString run = dir.filePath("elsewhere");
    QVERIFY(QDir().mkpath(run + "/checkpoints"));
    writeFileAtomically((run + "/settings.json").toStdString(), toJson(test::smallConfig(dir.path())).dump());
    writeFileAtomically((run + "/checkpoints/last.ckpt").toStdString(), "a checkpoint");
    writeFileAtomically((run + "/metrics.csv").toStdString(), "kind,step,epoch,loss\ntrain,47,1,0.5\ntrain,48,1,0.4\n");
    // Another process holds the run's lock as a training does (flock on .lock): a child forked here, not a
    // QProcess, whose clone() the TSan runtime cannot follow (tsan_rtl.cpp:234 CHECK failed).
    const std::string lock = (run + "/.lock").toStdString();
    int ready[2];
    QCOMPARE(::pipe(ready), 0);
    const pid_t other = ::fork();
    QVERIFY(other >= 0);
    if (other == 0) {  // async-signal-safe calls only
      const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
      if (::write(ready[1], "x", 1) != 1) ::_exit(1);
      for (;;) ::pause();
    }
    struct Reap {  // the child goes however the test ends
      pid_t pid;
      ~Reap() {
        if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
      }
    } reap{other};
    ::close(ready[1]);
    char byte = 0;
    QCOMPARE(::read(ready[0], &byte, 1), ssize_t(1));  // the lock is held
    ::close(ready[0]);
    ui::RunInfo info = ui::readRunInfo(run);
    QCOMPARE(info.status, QString("training elsewhere"));
    QVERIFY(!info.resumable);
    QVERIFY2(info.error.contains(QString("process %1 is training this run now").arg(other)), qPrintable(info.error));
    QCOMPARE(info.steps, qint64(48));
    QCOMPARE(::kill(other, SIGKILL), 0);
    QCOMPARE(::waitpid(other, nullptr, 0), other);
    reap.pid = -1;
    info = ui::readRunInfo(run);
    QCOMPARE(info.status, QString("interrupted"));
    QVERIFY(info.resumable);
    QCOMPARE(info.steps, qint64(48));
  }

  // Issue 9, item 8: a run with a single evaluation shows its point inside
  // the axes with whole-step ticks; a log loss axis over less than a decade
  // has ticks below 1 too.
  void chartsReadWellWithFewPoints() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "one-evaluation";
    c.train.max_steps = 3;  // evaluated once, at its end
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    const QString run =
        QDir(QString::fromStdString(finished.front().front().value<RunSummary>().runDir)).absolutePath();
    m_window->runsPanel()->selectRuns({run});
    MetricChart* acc = chart(PlotsPanel::Accuracy);
    QCOMPARE(points(PlotsPanel::Accuracy, run, "eval_accuracy"), size_t{1});
    acc->refreshNow();
    const QCPRange x = acc->plot()->xAxis->range();
    QVERIFY2(x.lower < 3 && x.upper > 3, qPrintable(QString("%1..%2").arg(x.lower).arg(x.upper)));
    QVERIFY2(x.upper - 3 >= 0.5 && 3 - x.lower >= 0.5, qPrintable(QString("%1..%2").arg(x.lower).arg(x.upper)));
    QVERIFY2(acc->xTickStep() >= 1, qPrintable(QString::number(acc->xTickStep())));

    MetricChart lossChart("Loss", "loss");
    lossChart.resize(600, 400);
    lossChart.show();
    lossChart.addSeries("l", "loss", {QPen(Qt::blue), false, false, true, {}});
    for (int i = 0; i <= 100; ++i) lossChart.append("l", i, 2.5 * std::pow(0.3 / 2.5, i / 100.0));  // 2.5 down to 0.3
    lossChart.setLogScale(true);
    lossChart.refreshNow();
    const QStringList labels = lossChart.yTickLabels();
    QVERIFY2(labels.size() >= 3, qPrintable(labels.join(", ")));
    QVERIFY2(std::any_of(labels.begin(), labels.end(),
                         [](const QString& l) { return l.toDouble() > 0 && l.toDouble() < 1; }),
             qPrintable(labels.join(", ")));

    // Issue 9, item 6: with two runs overlaid the legend is under the axes,
    // not over the curves; a click on an entry hides its curve, another
    // shows it again.
    m_window->runsPanel()->selectRuns({stopped, run});
    MetricChart* loss = chart(PlotsPanel::Loss);
    loss->refreshNow();
    QCustomPlot* plot = loss->plot();
    QVERIFY(plot->legend->visible());
    QVERIFY(plot->legend->itemCount() >= 2);
    QVERIFY(!plot->axisRect()->outerRect().intersects(plot->legend->outerRect()));
    QCPAbstractLegendItem* first = plot->legend->item(0);
    auto* entry = qobject_cast<QCPPlottableLegendItem*>(first);
    QVERIFY(entry);
    const QPoint at = first->outerRect().center();
    const bool following = loss->following();
    QTest::mouseClick(plot, Qt::LeftButton, {}, at);
    QTRY_VERIFY(!entry->plottable()->visible());
    QCOMPARE(loss->following(), following);  // a legend click is not a pan
    QTest::mouseClick(plot, Qt::LeftButton, {}, at);
    QTRY_VERIFY(entry->plottable()->visible());
  }
};

QTEST_MAIN(TestWindowRuns)
#include "test_window_runs.moc"
