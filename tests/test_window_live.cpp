// The window on a live run: curves drawn as it trains, pause, a learning-rate
// change, stop with a checkpoint, the status bar, closing during a run, a
// fork of the paused run, and a run in several processes. Each test opens its
// own window and starts its own run (tests/window_suite.h).
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

#include <algorithm>
#include <cmath>
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

class TestWindowLive : public test::WindowSuite {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { setUpSuite(); }
  void init() { openWindow(); }
  void cleanup() { closeWindow(); }

  void liveRunDrawsLossAndLearningRate() {
    m_window->settingsPanel()->setConfig(longConfig());
    QVERIFY(m_window->settingsPanel()->isValid());
    QTRY_VERIFY(chart(PlotsPanel::LearningRate)->series("preview/lr") != nullptr);
    // Start through the toolbar, as a person does (F5 is its shortcut).
    QVERIFY(m_window->runToolBar()->startAction()->isEnabled());
    m_window->runToolBar()->startAction()->trigger();
    QVERIFY(controller()->active());
    const QString run = QDir(controller()->runDir()).absolutePath();
    QTRY_VERIFY_WITH_TIMEOUT(points(PlotsPanel::Loss, run, "train_loss") >= 10, kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(points(PlotsPanel::Accuracy, run, "eval_accuracy") >= 1, kWindowTimeout);
    QVERIFY(points(PlotsPanel::LearningRate, run, "lr") >= 10);
    QVERIFY(points(PlotsPanel::Loss, run, "train_loss_smooth") == points(PlotsPanel::Loss, run, "train_loss"));
    // Settings cannot change under a running run; Start waits for it to end.
    QVERIFY(!m_window->settingsPanel()->editor("optimizer.lr")->isEnabled());
    QVERIFY(!m_window->runToolBar()->startAction()->isEnabled());
    QVERIFY(!m_window->settingsPanel()->undoAction()->isEnabled());

    // The actual learning rate lies on the planned curve drawn before the start.
    const ui::PlotSeries* actual = chart(PlotsPanel::LearningRate)->series(run + "/lr");
    const ui::PlotSeries* planned = chart(PlotsPanel::LearningRate)->series("preview/lr");
    QVERIFY(planned && planned->size() == 64 * 200);
    for (size_t i = 0; i < actual->size(); ++i) {
      const size_t step = static_cast<size_t>(actual->x[i]);
      QVERIFY(std::abs(actual->y[i] - planned->y[step - 1]) <= 1e-12 * planned->y[step - 1]);
    }
    // The engine's log reaches the log dock through spdlog's Qt sink.
    QTRY_VERIFY(m_window->logPanel()->visibleText().contains("starting run"));
    QVERIFY(m_window->runStatusBar()->stepText().contains("step"));
    // The status bar counts the records the window has drawn from the queue,
    // and names none dropped.
    auto shown = [&] { return QLocale().toLongLong(m_window->runStatusBar()->recordsText().section(' ', 0, 0)); };
    QTRY_VERIFY_WITH_TIMEOUT(shown() > 0, kWindowTimeout);
    QVERIFY(m_window->runStatusBar()->recordsText().endsWith(" records"));
    QVERIFY2(shown() <= controller()->receivedRecords(), qPrintable(m_window->runStatusBar()->recordsText()));
    QCOMPARE(controller()->droppedRecords(), int64_t{0});
  }

  void statusBarNamesDroppedRecords() {
    // A queue too small for the records (a stalled window) drops some from
    // the live view only; the status bar says how many, in its warning colour.
    ui::RunStatusBar bar;
    Progress p;
    p.state = SessionState::Running;
    p.droppedRecords = 1234;
    bar.showProgress(p, nullptr, 56789);
    QCOMPARE(bar.recordsText(), QLocale().toString(56789) + " records, " + QLocale().toString(1234) + " dropped");
    p.droppedRecords = 0;
    bar.showProgress(p, nullptr, 56790);
    QCOMPARE(bar.recordsText(), QLocale().toString(56790) + " records");
  }

  void pauseHoldsTheStepCount() {
    const QString live = startLongRun();
    QVERIFY(!live.isEmpty());
    m_window->runToolBar()->pauseAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(controller()->state(), SessionState::Paused, kWindowTimeout);
    QVERIFY(m_window->runToolBar()->resumeAction()->isEnabled());
    QVERIFY(!m_window->runToolBar()->pauseAction()->isEnabled());
    const int64_t step = controller()->progress().step;
    const size_t drawn = points(PlotsPanel::Loss, live, "train_loss");
    QTest::qWait(800);
    QCOMPARE(controller()->progress().step, step);
    QCOMPARE(points(PlotsPanel::Loss, live, "train_loss"), drawn);
    m_window->runToolBar()->resumeAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(controller()->progress().step > step + 4, kWindowTimeout);
  }

  void learningRateChangeLandsInTheRun() {
    QVERIFY(!startLongRun().isEmpty());
    QLineEdit* edit = m_window->runToolBar()->lrEdit();
    edit->setText("0.0123");
    m_window->runToolBar()->setLrAction()->trigger();
    auto changed = [&] {
      for (const auto& r : controller()->records())
        if (r.kind == RecordKind::LrChange) return r.lr == 0.0123;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(changed(), kWindowTimeout);
    QVERIFY(chart(PlotsPanel::LearningRate)->markerCount() >= 1);
    QVERIFY(chart(PlotsPanel::Loss)->markerCount() >= 1);
    // Later steps train at the new rate (cosine continues, scaled to it).
    int64_t changeStep = 0;
    for (const auto& r : controller()->records())
      if (r.kind == RecordKind::LrChange) changeStep = r.step;
    auto trainedAfter = [&] {
      for (const auto& r : controller()->records())
        if (r.kind == RecordKind::Train && r.step == changeStep + 1) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(trainedAfter(), kWindowTimeout);
    for (const auto& r : controller()->records())
      if (r.kind == RecordKind::Train && r.step == changeStep + 1) QVERIFY(std::abs(r.lr - 0.0123) < 1e-3 * 0.0123);
    // Issue 9, item 13: the dashed planned curve is scaled with it, so the
    // steps after the change lie on it as those before did.
    const ui::PlotSeries* planned = chart(PlotsPanel::LearningRate)->series("preview/lr");
    QVERIFY(planned);
    int checked = 0;
    for (const auto& r : controller()->records())
      if (r.kind == RecordKind::Train && r.step > changeStep) {
        const double want = planned->y[static_cast<size_t>(r.step - 1)];
        QVERIFY2(std::abs(r.lr - want) <= 1e-9 * want,
                 qPrintable(QString("%1: %2 %3").arg(r.step).arg(r.lr).arg(want)));
        ++checked;
      }
    QVERIFY(checked >= 1);
    // Bad input in the field is refused with a message, nothing is sent.
    edit->setText("fast");
    m_window->runToolBar()->setLrAction()->trigger();
    QVERIFY(m_window->lastMessage().contains("must be a number > 0 (got \"fast\")"));
  }

  void stopLeavesACheckpoint() {
    const QString run = startLongRun();
    QVERIFY(!run.isEmpty());
    QVERIFY(changeLr(0.0123));
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    m_window->runToolBar()->stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    QVERIFY(!controller()->active());
    const auto summary = finished.front().front().value<RunSummary>();
    QCOMPARE(statusName(summary.status), std::string("stopped"));
    QVERIFY(QFile::exists(run + "/checkpoints/last.ckpt"));
    QVERIFY(m_window->runToolBar()->startAction()->isEnabled());
    QVERIFY(m_window->settingsPanel()->editor("optimizer.lr")->isEnabled());
    QVERIFY(m_window->settingsPanel()->undoAction()->isEnabled());  // the settings were set before the start
    // The learning-rate change is recorded with the run.
    std::ifstream in((run + "/settings.json").toStdString());
    const auto settings = nlohmann::json::parse(in);
    QCOMPARE(settings["run_info"]["lr_changes"].size(), size_t{1});
    QCOMPARE(settings["run_info"]["lr_changes"][0]["lr"].get<double>(), 0.0123);
    QCOMPARE(countRows(run, RecordKind::LrChange), size_t{1});
    // Every record that reached the window is in metrics.csv, and nothing more.
    QCOMPARE(countRows(run, RecordKind::Train), points(PlotsPanel::Loss, run, "train_loss"));
    // The runs list shows it stopped, and offers to resume it.
    ui::RunsPanel* runs = m_window->runsPanel();
    QVERIFY(runs->runCount() >= 1);
    runs->selectRuns({run});
    QCOMPARE(runs->selectedRuns(), QStringList{run});
    QCOMPARE(runs->list()->selectedItems().front()->text(2), QString("stopped"));
    QVERIFY(runs->findChild<QPushButton*>("resumeRun")->isEnabled());
  }

  // Fork of the paused live run: the fork trains from its current weights
  // while it stays paused; then Resume brings it back, going on from there.
  void forkOfThePausedLiveRun() {
    TrainConfig c = longConfig();
    c.name = "paused-parent";
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    const QString parent = QDir(controller()->runDir()).absolutePath();
    QTRY_VERIFY_WITH_TIMEOUT(controller()->progress().step >= 6, kWindowTimeout);
    controller()->pause();
    QTRY_COMPARE_WITH_TIMEOUT(controller()->state(), SessionState::Paused, kWindowTimeout);
    const int64_t pausedAt = controller()->progress().step;
    m_window->runsPanel()->selectRuns({parent});
    QVERIFY(m_window->runsPanel()->findChild<QPushButton*>("forkRun")->isEnabled());

    ForkOptions fork;
    fork.overrides = {"optimizer.lr=0.01", "train.epochs=3", "train.max_steps=" + std::to_string(pausedAt + 8),
                      "name=paused-fork"};
    QVERIFY2(m_window->forkRun(parent, fork), qPrintable(m_window->lastMessage()));
    const QString forkDir = QDir(controller()->runDir()).absolutePath();
    QVERIFY(forkDir != parent);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    const auto s = finished.front().front().value<RunSummary>();
    QCOMPARE(statusName(s.status), std::string("completed"));
    QCOMPARE(s.steps, pausedAt + 8);
    std::vector<MetricRecord> rows;
    ui::readRunMetrics(forkDir, rows);
    QCOMPARE(rows.front().step, pausedAt + 1);  // from the paused step's weights
    QCOMPARE(ui::readRunInfo(forkDir).parentStep, pausedAt);
    QCOMPARE(controller()->parkedRunDir(), parent);

    // The parent waited, paused; Resume in the Runs list brings it back.
    m_window->runsPanel()->refresh();
    m_window->runsPanel()->selectRuns({parent});
    QVERIFY(m_window->runsPanel()->findChild<QPushButton*>("resumeRun")->isEnabled());
    m_window->runsPanel()->findChild<QPushButton*>("resumeRun")->click();
    QVERIFY(controller()->parkedRunDir().isEmpty());
    QCOMPARE(QDir(controller()->runDir()).absolutePath(), parent);
    QTRY_VERIFY_WITH_TIMEOUT(controller()->progress().step > pausedAt + 2, kWindowTimeout);
    controller()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kWindowTimeout);
    rows.clear();
    ui::readRunMetrics(parent, rows);
    int64_t last = 0;
    for (const auto& r : rows)
      if (r.kind == RecordKind::Train) {
        QCOMPARE(r.step, last + 1);  // every step once, through the pause
        last = r.step;
      }
    QVERIFY(last > pausedAt);
  }

  void closingDuringARunKeepsItsCheckpoint() {
    auto window = std::make_unique<ui::MainWindow>(QString::fromStdString(defaultPresetDir()), false);
    window->show();
    TrainConfig c = longConfig();
    c.name = "closed";
    window->settingsPanel()->setConfig(c);
    QVERIFY(window->startRun());
    const QString run = window->controller()->runDir();
    QTRY_VERIFY_WITH_TIMEOUT(window->controller()->progress().step > 5, kWindowTimeout);
    QVERIFY(window->close());
    QVERIFY(!window->controller()->active());
    QVERIFY(QFile::exists(run + "/checkpoints/last.ckpt"));
    QCOMPARE(ui::readRunInfo(run).status, QString("stopped"));
  }

  // Issue 9, item 7: at the end of a 2-epoch run the status bar says epoch
  // 2 (not 3), and no ETA or samples/s are left over.
  void statusBarAtTheEndOfARun() {
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "two-epochs";
    c.data.train_limit = 128;
    c.train.epochs = 2;
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    QCOMPARE(finished.front().front().value<RunSummary>().steps, int64_t(8));
    QTRY_VERIFY2(m_window->runStatusBar()->stepText().startsWith("epoch 2 · step 8 / 8"),
                 qPrintable(m_window->runStatusBar()->stepText()));
    QCOMPARE(m_window->runStatusBar()->etaText(), QString());
    QCOMPARE(m_window->runStatusBar()->speedText(), QString());
    // The end of a run is a desktop notification (popped up only while the
    // window is not the one in use; the title is kept either way).
    QVERIFY2(m_window->lastNotification().endsWith("-two-epochs completed"), qPrintable(m_window->lastNotification()));
  }

  // Issue 9, item 7: an evaluation says so in the status bar, with its
  // progress in batches; Stop says "stopping…" until the run has ended (here
  // during an evaluation, which is finished first), then "stopped".
  void statusBarSaysEvaluatingAndStopping() {
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "slow-evaluation";
    c.data.test_limit = 10000;
    c.evaluation.batch_size = 1;  // 10,000 passes: seconds, long enough to be seen
    c.evaluation.every_steps = 4;
    m_window->settingsPanel()->setConfig(c);
    // View > Desktop notifications off: this run's end notifies nobody.
    auto* notifyAction = m_window->findChild<QAction*>("notifyAction");
    QVERIFY(notifyAction && notifyAction->isChecked());
    notifyAction->setChecked(false);
    const QString notifiedBefore = m_window->lastNotification();
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    ui::RunStatusBar* bar = m_window->runStatusBar();
    QTRY_COMPARE_WITH_TIMEOUT(bar->stateText(), QString("evaluating"), kWindowTimeout);
    QVERIFY2(bar->loadingText().startsWith("evaluating on the test set "), qPrintable(bar->loadingText()));
    QVERIFY2(bar->loadingText().endsWith("/10000"), qPrintable(bar->loadingText()));
    m_window->runToolBar()->stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(bar->stateText(), QString("stopping…"), kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    const auto s = finished.front().front().value<RunSummary>();
    QCOMPARE(statusName(s.status), std::string("stopped"));
    QCOMPARE(s.steps % 4, int64_t(0));  // the evaluation ended, then the run
    QTRY_COMPARE(bar->stateText(), QString("stopped"));
    QCOMPARE(bar->loadingText(), QString());
    QCOMPARE(m_window->lastNotification(), notifiedBefore);
    notifyAction->setChecked(true);
  }

  // Issue 9 (progress and health): the live run's utilisation. Once a second
  // the window samples this process's CPU share (of all cores) and, through
  // NVML where NVIDIA's driver is, the GPU's; the chart's title says where
  // the GPU figures come from or why there are none.
  void utilisationOfTheLiveRun() {
    TrainConfig c = longConfig();
    c.name = "utilisation";
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    const QString run = QDir(controller()->runDir()).absolutePath();
    MetricChart* use = chart(PlotsPanel::Utilisation);
    const auto samples = [&] {
      const ui::PlotSeries* cpu = use->series(run + "/cpu");
      return cpu ? cpu->size() : size_t{0};
    };
    QTRY_VERIFY_WITH_TIMEOUT(samples() >= 3, kWindowTimeout);
    // The epoch's progress as a bar while it trains: 2048 examples in
    // batches of 32 are 64 steps an epoch.
    ui::RunStatusBar* bar = m_window->runStatusBar();
    const QRegularExpression epochBar("^epoch (\\d+): (\\d+)/64 steps$");
    QTRY_VERIFY2(epochBar.match(bar->epochText()).hasMatch(), qPrintable(bar->epochText()));
    const auto m = epochBar.match(bar->epochText());
    QVERIFY(m.captured(2).toInt() <= 64);
    // The epoch number is the status bar's own ("epoch N · step ...").
    QVERIFY2(bar->stepText().startsWith("epoch "), qPrintable(bar->stepText()));
    controller()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    const ui::PlotSeries* cpu = use->series(run + "/cpu");
    double busiest = 0;
    for (double y : cpu->y) {
      QVERIFY2(y >= 0 && y <= 101, qPrintable(QString::number(y)));  // a share of all cores
      busiest = std::max(busiest, y);
    }
    QVERIFY2(busiest > 5, qPrintable(QString::number(busiest)));  // training keeps a core busy
    // At the run's steps, in order.
    QVERIFY(std::is_sorted(cpu->x.begin(), cpu->x.end()));
    QVERIFY(use->title().contains("NVML") || use->title().contains("no GPU figures"));
    QVERIFY(use->series(run + "/gpu")->empty());  // a CPU run has no GPU figures
    QTRY_COMPARE(bar->epochText(), QString());    // no bar once the run has ended
  }

  // Issue 9, items 1 and 11: selecting a past run during a live run draws
  // it over the live one, which goes on being drawn; Resume and Continue are
  // disabled for other runs meanwhile, and a resume refused anyway leaves the
  // live curves as they were (no line back to step 1).
  void theLiveRunStaysOnScreen() {
    const QString stopped = stoppedRun();
    QVERIFY(!stopped.isEmpty());
    TrainConfig c = longConfig();
    c.name = "live";
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    const QString live = QDir(controller()->runDir()).absolutePath();
    QTRY_VERIFY_WITH_TIMEOUT(points(PlotsPanel::Loss, live, "train_loss") >= 4, kWindowTimeout);
    m_window->runsPanel()->selectRuns({stopped});
    QVERIFY(points(PlotsPanel::Loss, stopped, "train_loss") > 0);  // overlaid
    const size_t before = points(PlotsPanel::Loss, live, "train_loss");
    QVERIFY(before >= 4);
    QTRY_VERIFY_WITH_TIMEOUT(points(PlotsPanel::Loss, live, "train_loss") > before + 4, kWindowTimeout);  // still drawn
    QVERIFY(m_window->windowTitle().contains(QFileInfo(live).fileName()));
    auto* resume = m_window->runsPanel()->findChild<QPushButton*>("resumeRun");
    auto* more = m_window->runsPanel()->findChild<QPushButton*>("continueRun");
    QVERIFY(!resume->isEnabled() && !more->isEnabled());
    QVERIFY(resume->toolTip().contains("A run is going"));
    QVERIFY(!m_window->resumeRun(stopped));  // refused all the same
    const size_t now = points(PlotsPanel::Loss, live, "train_loss");
    QTRY_VERIFY_WITH_TIMEOUT(points(PlotsPanel::Loss, live, "train_loss") > now + 4, kWindowTimeout);
    const ui::PlotSeries* loss = chart(PlotsPanel::Loss)->series(live + "/train_loss");
    for (size_t i = 1; i < loss->size(); ++i) QVERIFY2(loss->x[i] > loss->x[i - 1], qPrintable(QString::number(i)));
    controller()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    QTRY_VERIFY(m_window->runsPanel()->findChild<QPushButton*>("resumeRun")->toolTip().contains("last checkpoint"));
  }

  // Issue 10: distributed.devices starts the run in two CPU processes
  // through torchrun; rank 0's records are drawn as a live run's.
  void runInSeveralProcesses() {
    TrainConfig c = test::smallConfig(m_dir.filePath("runs"));
    c.name = "two-processes";
    c.model.kind = "mlp";
    c.model.width = 32;
    c.model.depth = 1;
    c.data.train_limit = 512;
    c.train.epochs = 2;
    c.train.batch_size = 32;  // per process: 64 a step
    c.performance.threads = 1;
    c.distributed.devices = "cpu,cpu";
    m_window->settingsPanel()->setConfig(c);
    QVERIFY(m_window->settingsPanel()->isValid());
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    QVERIFY(m_window->startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!controller()->runDir().isEmpty(), kWindowTimeout);
    const QString run = QDir(controller()->runDir()).absolutePath();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    const RunSummary s = finished.front().front().value<RunSummary>();
    QVERIFY2(s.status == RunStatus::completed, s.error.c_str());
    QCOMPARE(s.worldSize, 2);
    QCOMPARE(s.steps, int64_t(16));  // 512 examples, 64 a step, 2 epochs
    QCOMPARE(points(PlotsPanel::Loss, run, "train_loss"), countRows(run, RecordKind::Train));
    QCOMPARE(points(PlotsPanel::Loss, run, "train_loss"), size_t(16));
    QCOMPARE(points(PlotsPanel::Accuracy, run, "eval_accuracy"), countRows(run, RecordKind::Eval));
    QVERIFY(QDir(m_dir.filePath("runs")).entryList({"*two-processes*"}, QDir::Dirs).size() == 1);
    QVERIFY(m_window->settingsPanel()->editor("optimizer.lr")->isEnabled());  // unlocked again
  }
};

QTEST_MAIN(TestWindowLive)
#include "test_window_live.moc"
