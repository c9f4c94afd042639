#pragma once
// What the window's suites (test_window_live, test_window_runs,
// test_window_form) share: a window of their own for each test (init opens
// it, cleanup stops its run and closes it), the suite's temporary folder for
// settings and runs, and the runs a test needs made for it: a long run going,
// stopped with a learning-rate change, or a short finished one. Any test runs
// alone (a function name after the suite's name).
#include <QtTest/QtTest>

#include <QDir>
#include <QLineEdit>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/metric_record.h"
#include "studio/presets.h"
#include "test_support.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/runs/run_catalog.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_toolbar.h"

namespace studio::test {

constexpr int kWindowTimeout = kHangLimitMs;

// The rows of this kind in a run's metrics.csv (with a finite loss only, if asked).
inline size_t countRows(const QString& runDir, RecordKind kind, bool finiteLoss = false) {
  std::vector<MetricRecord> records;
  ui::readRunMetrics(runDir, records);
  size_t n = 0;
  for (const auto& r : records)
    if (r.kind == kind && (!finiteLoss || std::isfinite(r.trainLoss))) ++n;
  return n;
}

// With STUDIO_SCREENSHOTS set to a folder, the window at 1280x720 on this
// central tab (or as it is, with none), saved there as NAME.png: the
// screenshots a closing note describes. Nothing without it.
inline void screenshotAt720(ui::MainWindow& window, QWidget* tab, const QString& name) {
  const QString folder = qEnvironmentVariable("STUDIO_SCREENSHOTS");
  if (folder.isEmpty()) return;
  window.resize(1280, 720);
  window.show();
  if (tab) window.tabs()->setCurrentWidget(tab);
  QTest::qWait(300);  // laid out and drawn
  QDir().mkpath(folder);
  window.grab().save(folder + "/" + name + ".png");
}

class WindowSuite : public QObject {
 protected:
  QTemporaryDir m_dir;
  std::unique_ptr<ui::MainWindow> m_window;

  // QSettings of the suite live in its temporary folder, never the user's.
  void setUpSuite() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName("TrainingStudioTests");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath("config"));
  }
  // A new window on the default preset, its runs in the suite's folder.
  void openWindow() {
    m_window = std::make_unique<ui::MainWindow>(QString::fromStdString(defaultPresetDir()), false);
    m_window->resize(1400, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_window->settingsPanel()->setConfig(smallConfig(m_dir.filePath("runs")));
  }
  // A run still going is stopped (its checkpoint kept) before the window goes.
  void closeWindow() {
    if (m_window && controller()->active()) {
      controller()->stop();
      QVERIFY(QTest::qWaitFor([&] { return !controller()->active(); }, kWindowTimeout));
    }
    m_window.reset();
  }

  TrainConfig longConfig() {
    TrainConfig c = smallConfig(m_dir.filePath("runs"));
    c.name = "long";
    c.data.train_limit = 2048;
    c.train.epochs = 200;  // stopped long before its end
    c.train.log_every_steps = 2;
    c.evaluation.every_steps = 32;
    c.schedule.kind = ScheduleKind::cosine;
    return c;
  }
  ui::RunController* controller() { return m_window->controller(); }
  static std::string readRunSettingsName(const std::string& runDir) {
    return nlohmann::json::parse(readText(runDir + "/settings.json"))["name"].get<std::string>();
  }
  ui::MetricChart* chart(ui::PlotsPanel::Chart c) { return m_window->plotsPanel()->chart(c); }
  size_t points(ui::PlotsPanel::Chart c, const QString& run, const char* metric) {
    const ui::PlotSeries* s = chart(c)->series(run + "/" + metric);
    return s ? s->size() : 0;
  }

  // longConfig started with the toolbar's Start, once it has drawn ten loss
  // points and an evaluation: its folder, or empty (with a warning) if not.
  QString startLongRun() {
    m_window->settingsPanel()->setConfig(longConfig());
    // Its plan drawn first, as a person sees it before pressing Start (64
    // steps an epoch, 200 epochs).
    const bool planned = QTest::qWaitFor(
        [&] {
          const ui::PlotSeries* plan = chart(ui::PlotsPanel::LearningRate)->series("preview/lr");
          return plan && plan->size() == 64 * 200;
        },
        kWindowTimeout);
    if (!planned || !m_window->settingsPanel()->isValid() || !m_window->runToolBar()->startAction()->isEnabled()) {
      qWarning("startLongRun: the long run's settings are not valid");
      return {};
    }
    m_window->runToolBar()->startAction()->trigger();
    if (!controller()->active()) return {};
    const QString run = QDir(controller()->runDir()).absolutePath();
    const bool drawn = QTest::qWaitFor(
        [&] {
          return points(ui::PlotsPanel::Loss, run, "train_loss") >= 10 &&
                 points(ui::PlotsPanel::Accuracy, run, "eval_accuracy") >= 1;
        },
        kWindowTimeout);
    if (!drawn) qWarning("startLongRun: no ten loss points and an evaluation in time");
    return drawn ? run : QString();
  }
  // The toolbar's learning-rate change on the live run, once its record came.
  bool changeLr(double lr) {
    m_window->runToolBar()->lrEdit()->setText(QString::number(lr));
    m_window->runToolBar()->setLrAction()->trigger();
    return QTest::qWaitFor(
        [&] {
          for (const auto& r : controller()->records())
            if (r.kind == RecordKind::LrChange && r.lr == lr) return true;
          return false;
        },
        kWindowTimeout);
  }
  // The toolbar's Stop, once the run has ended.
  bool stopRun() {
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    m_window->runToolBar()->stopAction()->trigger();
    return QTest::qWaitFor([&] { return finished.count() == 1; }, kWindowTimeout);
  }
  // A long run stopped after a learning-rate change to 0.0123, with its
  // checkpoint: its folder, or empty.
  QString stoppedRun() {
    const QString run = startLongRun();
    return !run.isEmpty() && changeLr(0.0123) && stopRun() ? run : QString();
  }
  // A short run that completed: 12 steps of Adam at 0.003, a record every
  // step; its folder, or empty.
  QString shortRun() {
    TrainConfig c = smallConfig(m_dir.filePath("runs"));
    c.name = "short";
    c.train.max_steps = 12;
    c.train.log_every_steps = 2;
    c.optimizer.kind = OptimizerKind::adam;
    c.optimizer.lr = 0.003;
    m_window->settingsPanel()->setConfig(c);
    QSignalSpy finished(m_window.get(), &ui::MainWindow::runFinished);
    if (!m_window->startRun()) return {};
    const QString run = QDir(controller()->runDir()).absolutePath();
    if (!QTest::qWaitFor([&] { return finished.count() == 1; }, kWindowTimeout)) return {};
    return finished.front().front().value<RunSummary>().status == RunStatus::completed ? run : QString();
  }
};

}  // namespace studio::test
