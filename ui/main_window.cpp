#include "ui/main_window.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QIcon>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "studio/dataset_info.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "studio/sha256.h"
#include "ui/data_panel.h"
#include "ui/evaluation_panel.h"
#include "ui/help_dialog.h"
#include "ui/log_panel.h"
#include "ui/lr_find_dialog.h"
#include "ui/model_panel.h"
#include "ui/metric_chart.h"
#include "ui/plots_panel.h"
#include "ui/run_catalog.h"
#include "ui/system_monitor.h"
#include "ui/run_controller.h"
#include "ui/run_status_bar.h"
#include "ui/run_toolbar.h"
#include "ui/runs_panel.h"
#include "ui/settings_panel.h"
#include "ui/theme.h"

namespace studio::ui {
namespace {

QString absolute(const QString& dir) { return QDir(dir).absolutePath(); }

QString runLabel(const RunInfo& info) {
  const QString name = info.title.isEmpty() ? info.name : info.title;
  return info.started.isValid() ? QString("%1 %2").arg(name, info.started.toString("MM-dd HH:mm:ss")) : info.folderName;
}

// Under an exported chart: which run, and the settings that tell runs apart.
QString exportCaption(const QString& runDir) {
  const RunInfo info = readRunInfo(runDir);
  QStringList parts{info.folderName};
  try {
    const TrainConfig c = loadConfigFile((runDir + "/settings.json").toStdString());
    if (!info.model.isEmpty()) parts << QObject::tr("model %1").arg(info.model);
    parts << QObject::tr("%1 lr %2").arg(QString::fromStdString(c.optimizer.kind)).arg(c.optimizer.lr, 0, 'g', 4)
          << QObject::tr("batch %1 x %2").arg(c.train.batch_size).arg(c.train.accumulation_steps)
          << QObject::tr("schedule %1").arg(QString::fromStdString(c.schedule.kind))
          << QString::fromStdString(c.precision.mode);
  } catch (const std::exception&) {
    // A folder without readable settings: its name says which run it is.
  }
  parts << QObject::tr("%1 of %2 steps").arg(info.steps).arg(info.totalSteps);
  if (std::isfinite(info.bestAccuracy))
    parts << QObject::tr("best accuracy %1 %").arg(100 * info.bestAccuracy, 0, 'f', 2);
  return parts.join(QStringLiteral("  ·  "));
}

QDockWidget* dock(const QString& title, const QString& name, QWidget* content, QMainWindow* window) {
  auto* d = new QDockWidget(title, window);
  d->setObjectName(name);
  d->setWidget(content);
  return d;
}

}  // namespace

MainWindow::MainWindow(const QString& presetDir, bool restore, QWidget* parent)
    : QMainWindow(parent), m_presetDir(presetDir), m_settings(new SettingsPanel), m_tabs(new QTabWidget),
      m_plots(new PlotsPanel), m_data(new DataPanel), m_model(new ModelPanel), m_eval(new EvaluationPanel),
      m_runs(new RunsPanel), m_log(new LogPanel), m_toolbar(new RunToolBar(this)), m_status(new RunStatusBar(this)),
      m_controller(new RunController(this)), m_previewTimer(new QTimer(this)), m_restore(restore), m_dataJob(this),
      m_modelJob(this) {
  setWindowTitle(tr("Training Studio"));
  setObjectName("mainWindow");
  m_tabs->setObjectName("centralTabs");
  m_tabs->addTab(m_plots, tr("Curves"));
  m_tabs->addTab(m_data, tr("Data"));
  m_tabs->addTab(m_model, tr("Model"));
  m_tabs->addTab(m_eval, tr("Evaluation"));
  setCentralWidget(m_tabs);
  m_trustPrompt = [this](const QString& path, const QString& sha) {
    return QMessageBox::warning(this, tr("Run the code in a TorchScript file?"),
                                tr("%1 is a TorchScript model. Loading it runs the code in it, with your "
                                   "permissions: only go on with files you trust.\n\nSHA-256 %2\n\nTrain with it?")
                                    .arg(path, sha),
                                QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
  };
  if (restore)
    for (const QString& sha : QSettings().value("trust/torchscript").toStringList()) m_trusted.insert(sha);
  addToolBar(Qt::TopToolBarArea, m_toolbar);
  setStatusBar(m_status);
  auto* settingsDock = dock(tr("Settings"), "settingsDock", m_settings, this);
  settingsDock->setMinimumWidth(360);
  addDockWidget(Qt::LeftDockWidgetArea, settingsDock);
  addDockWidget(Qt::BottomDockWidgetArea, dock(tr("Runs"), "runsDock", m_runs, this));
  addDockWidget(Qt::BottomDockWidgetArea, dock(tr("Log"), "logDock", m_log, this));
  resize(1500, 950);

  m_previewTimer->setSingleShot(true);
  m_previewTimer->setInterval(80);  // typing coalesces into one schedule redraw
  m_settings->setPresets(presetDir);
  buildMenus();
  connectPanels();

  bool restored = false;
  if (m_restore) {
    restoreWindowState();
    QSettings s;
    const QString last = s.value("settings/last").toString();
    if (!last.isEmpty()) {
      const nlohmann::json doc = nlohmann::json::parse(last.toStdString(), nullptr, false);
      if (!doc.is_discarded()) {
        m_settings->applyDocument(doc);
        restored = true;
      }
    }
  }
  if (!restored) {
    const std::vector<std::string> names = presetNames(presetDir.toStdString());
    const bool hasDefault = std::find(names.begin(), names.end(), "fashion-mnist-cnn") != names.end();
    if (!names.empty()) m_settings->loadPreset(QString::fromStdString(hasDefault ? "fashion-mnist-cnn" : names.front()));
  }
  m_settings->undoStack()->clear();
  m_runs->setRunsDir(QString::fromStdString(m_settings->config().output.dir));
  checkData();
  updateSchedulePreview();
  m_toolbar->setSettingsValid(m_settings->isValid(), m_settings->errorTexts().join("; "));
  log::info("Training Studio ready; presets from " + presetDir.toStdString());
}

MainWindow::~MainWindow() {
  // The session's destructor would stop it too; doing it here first keeps the
  // panels alive while the last records arrive.
  m_controller->stopAndWait();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Load settings…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load settings"), QString(), tr("Settings (*.json)"));
    if (!path.isEmpty()) loadSettingsFile(path);
  });
  file->addAction(tr("Save settings…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save settings"),
                                                      QString::fromStdString(m_settings->config().name) + ".json",
                                                      tr("Settings (*.json)"));
    QString error;
    if (!path.isEmpty() && !m_settings->saveFile(path, &error)) showFailure(tr("Settings not saved"), error);
  });
  file->addAction(tr("Export run…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    const QStringList sel = m_runs->selectedRuns();
    const QString dir = sel.size() == 1 ? sel.front() : m_liveRun;
    if (dir.isEmpty())
      showMessage(tr("Select one run in the Runs list to export it."), true);
    else
      exportSelectedRun(dir);
  });
  file->addAction(tr("Chart export size…"), this, [this] {
    const QStringList sizes{"1200 x 700", "1600 x 900", "1920 x 1080", "2400 x 1400", "3200 x 1800"};
    const QString now = QString("%1 x %2").arg(m_chartExportSize.width()).arg(m_chartExportSize.height());
    bool ok = false;
    const QString chosen = QInputDialog::getItem(this, tr("Chart export size"), tr("Exported charts (pixels):"), sizes,
                                                 std::max<int>(0, static_cast<int>(sizes.indexOf(now))), false, &ok);
    const QStringList wh = chosen.split(" x ");
    if (ok && wh.size() == 2) setChartExportSize(QSize(wh[0].toInt(), wh[1].toInt()));
  });
  QMenu* recent = file->addMenu(tr("Recent runs"));
  connect(recent, &QMenu::aboutToShow, this, [this, recent] {
    recent->clear();
    for (const QString& dir : QSettings().value("runs/recent").toStringList()) {
      if (!QFile::exists(dir + "/settings.json")) continue;  // moved or deleted since
      recent->addAction(QFileInfo(dir).fileName(), this, [this, dir] {
        m_runs->setRunsDir(QFileInfo(dir).absolutePath());
        m_runs->selectRuns({dir});
      });
    }
    if (recent->isEmpty()) recent->addAction(tr("(none yet)"))->setEnabled(false);
  });
  file->addSeparator();
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(m_settings->undoAction());
  edit->addAction(m_settings->redoAction());

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  for (QAction* a : {m_toolbar->startAction(), m_toolbar->pauseAction(), m_toolbar->resumeAction(),
                     m_toolbar->stopAction(), m_toolbar->saveAction()})
    run->addAction(a);
  run->addSeparator();
  run->addAction(tr("Find learning rate…"), this, [this] { openLrFind(); });
  run->addAction(tr("Find largest batch…"), this, [this] { startBatchFind(); });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("Theme"));
  auto* group = new QActionGroup(this);
  const QString current = QSettings().value("view/theme", "system").toString();
  for (Theme t : {Theme::System, Theme::Light, Theme::Dark}) {
    QAction* a = theme->addAction(t == Theme::System ? tr("Desktop") : t == Theme::Light ? tr("Light") : tr("Dark"));
    a->setCheckable(true);
    a->setChecked(m_restore && themeName(t) == current);
    group->addAction(a);
    connect(a, &QAction::triggered, this, [t] {
      applyTheme(t);
      QSettings().setValue("view/theme", themeName(t));
    });
  }
  view->addAction(tr("Reset chart views"), this, [this] {
    for (auto* c : m_plots->charts()) c->resetView();
  });

  view->addSeparator();
  m_notifyAction = view->addAction(tr("Desktop notifications"));
  m_notifyAction->setObjectName("notifyAction");
  m_notifyAction->setCheckable(true);
  m_notifyAction->setToolTip(tr("A notification when a run ends or fails, or its loss starts diverging, while "
                                "the window is not the one in use"));
  m_notifyAction->setChecked(!m_restore || QSettings().value("view/notify", true).toBool());
  connect(m_notifyAction, &QAction::toggled, this, [this](bool on) {
    if (m_restore) QSettings().setValue("view/notify", on);
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("Guide"), QKeySequence::HelpContents, this, [this] { openGuide(); });
  QMenu* readme = help->addMenu(tr("README"));
  readme->setObjectName("readmeMenu");
  for (const QString& section : HelpDialog::readmeSections())
    readme->addAction(section, this, [this, section] { openGuide()->showReadme(section); });
  if (readme->isEmpty()) readme->addAction(tr("(no README next to this program)"))->setEnabled(false);
  help->addSeparator();
  help->addAction(tr("About Training Studio"), this, [this] {
    QMessageBox::about(this, tr("About Training Studio"),
                       tr("Training Studio %1\nTrains PyTorch models with LibTorch; every speed and memory "
                          "technique is a setting.")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::connectPanels() {
  connect(m_settings, &SettingsPanel::settingsChanged, this, [this] {
    m_toolbar->setSettingsValid(m_settings->isValid(), m_settings->errorTexts().join("; "));
    if (m_settings->isValid()) m_runs->setRunsDir(QString::fromStdString(m_settings->config().output.dir));
    m_previewTimer->start();
  });
  connect(m_settings, &SettingsPanel::message, this, [this](const QString& t) { showMessage(t); });
  connect(m_settings, &SettingsPanel::failed, this,
          [this](const QString& t) { showFailure(tr("Settings file not used"), t); });
  connect(m_previewTimer, &QTimer::timeout, this, [this] {
    checkData();
    updateSchedulePreview();
  });
  connect(m_data, &DataPanel::recheckRequested, this, [this] { checkData(true); });
  connect(m_model, &ModelPanel::trustRequested, this, [this](const QString& path) {
    try {
      const QString sha = QString::fromStdString(sha256OfFile(path.toStdString()));
      if (m_trusted.contains(sha) || m_trustPrompt(path, sha)) trust(sha);
    } catch (const std::exception& e) {
      showMessage(QString::fromStdString(e.what()), true);
    }
    m_modelKey.clear();
    updateModelSummary();
  });

  connect(m_toolbar, &RunToolBar::startRequested, this, &MainWindow::startRun);
  connect(m_toolbar, &RunToolBar::pauseRequested, m_controller, &RunController::pause);
  connect(m_toolbar, &RunToolBar::resumeRequested, m_controller, &RunController::resumeTraining);
  connect(m_toolbar, &RunToolBar::stopRequested, this, [this] {
    m_controller->stop();
    showMessage(tr("Stopping after the current step; a checkpoint is written."));
  });
  connect(m_toolbar, &RunToolBar::saveRequested, this, [this] {
    m_controller->saveCheckpointNow();
    showMessage(tr("Checkpoint requested"));
  });
  connect(m_toolbar, &RunToolBar::learningRateRequested, this, [this](double lr) {
    m_controller->setLearningRate(lr);
    showMessage(tr("Learning rate change to %1 sent").arg(lr));
  });
  connect(m_toolbar, &RunToolBar::message, this, [this](const QString& t) { showMessage(t, true); });

  connect(m_controller, &RunController::runStarted, this, [this](const QString& dir) {
    m_liveRun = absolute(dir);
    const RunShape shape = liveShape(readRunInfo(dir));
    m_plots->beginRun(m_liveRun, runLabel(readRunInfo(dir)), shape);
    m_status->setStepsPerEpoch(shape.stepsPerEpoch);
    m_eval->showRun(m_liveRun, runLabel(readRunInfo(dir)));
    m_runs->setLiveRun(m_liveRun);
    m_settings->setLocked(true);
    m_status->clearProgress();
    setWindowTitle(tr("Training Studio — %1").arg(QFileInfo(dir).fileName()));
    showMessage(tr("Run started: %1").arg(dir));
  });
  connect(m_controller, &RunController::recordsArrived, this, &MainWindow::onRecords);
  connect(m_controller, &RunController::stateChanged, this, &MainWindow::onStateChanged);
  connect(m_controller, &RunController::runFinished, this, &MainWindow::onRunFinished);
  connect(m_controller, &RunController::failed, this, [this](const QString& t) { showMessage(t, true); });
  // The live run's loss went wrong: said in the status bar (until the next
  // message) and the log, the step marked on the loss chart.
  connect(m_plots, &PlotsPanel::divergenceSeen, this, [this](const QString& key, const QString& text) {
    if (!m_controller->active() || absolute(key) != m_liveRun) return;
    m_lastMessage = text;
    m_status->showMessage(text, 0);
    log::warn(text.toStdString());
    notify(tr("Run %1 may be diverging").arg(QFileInfo(key).fileName()), text, false);
  });
  auto* statusTimer = new QTimer(this);
  statusTimer->setInterval(250);
  connect(statusTimer, &QTimer::timeout, this, [this] {
    // The live run's epochs, once it has read its data (its settings.json
    // then says how many examples): the epoch bar and the x-axis in epochs.
    if (m_controller->active() && !m_liveRun.isEmpty() && m_status->stepsPerEpoch() <= 0) {
      const RunInfo info = readRunInfo(m_liveRun);
      if (info.stepsPerEpoch > 0) {
        m_status->setStepsPerEpoch(info.stepsPerEpoch);
        m_plots->setRunShape(m_liveRun, {info.stepsPerEpoch, info.samplesPerStep});
      }
    }
    if (m_controller->active()) m_status->showProgress(m_controller->progress(), m_controller->lastTrainRecord(),
                           m_controller->receivedRecords());
  });
  statusTimer->start();
  // The machine's figures for the live run, once a second (Utilisation).
  m_monitor = std::make_unique<SystemMonitor>();
  m_plots->setSystemNote(m_monitor->gpuFigures() ? tr("GPU figures through NVML") : m_monitor->noGpuReason());
  auto* monitorTimer = new QTimer(this);
  monitorTimer->setInterval(1000);
  connect(monitorTimer, &QTimer::timeout, this, [this] {
    if (!m_controller->active() || m_liveRun.isEmpty()) return;
    const Progress p = m_controller->progress();
    int gpu = -1;
    if (p.device.rfind("cuda", 0) == 0) gpu = p.device.size() > 5 ? std::atoi(p.device.c_str() + 5) : 0;
    const SystemMonitor::Sample s = m_monitor->sample(gpu);
    m_plots->addSystemSample(m_liveRun, p.step, s.cpuPercent, s.gpuPercent, s.gpuMemoryPercent);
    m_plots->chart(PlotsPanel::Utilisation)->refresh();
  });
  monitorTimer->start();

  connect(m_runs, &RunsPanel::showRequested, this, &MainWindow::showRuns);
  connect(m_runs, &RunsPanel::message, this, [this](const QString& text, bool error) { showMessage(text, error); });
  connect(m_runs, &RunsPanel::resumeRequested, this, &MainWindow::resumeRun);
  connect(m_runs, &RunsPanel::continueRequested, this, &MainWindow::askContinue);
  connect(m_runs, &RunsPanel::forkRequested, this, &MainWindow::askFork);
  connect(m_runs, &RunsPanel::queueAddRequested, this, &MainWindow::addToQueue);
  connect(m_runs, &RunsPanel::queueRunRequested, this, &MainWindow::runQueue);
  connect(m_runs, &RunsPanel::exportRequested, this, &MainWindow::exportSelectedRun);
}

void MainWindow::updateSchedulePreview() {
  const TrainConfig c = m_settings->config();
  if (!validate(c).empty()) return;  // the form shows what to fix
  MetricChart* lr = m_plots->chart(PlotsPanel::LearningRate);
  if (m_previewKey != dataPreviewKey(c) || !m_previewDone) {
    lr->setTitle(tr("Learning rate (planning: reading the data…)"));
    return;
  }
  if (!m_preview.ok) {
    m_plots->setSchedulePreview({});
    lr->setTitle(tr("Learning rate (no plan: %1)").arg(m_preview.error));
    m_settings->setPlanError({}, {});
    return;
  }
  const StepPlan plan = planSteps(c, m_preview.description.trainSize());
  // Only the plan knows the run's length: a warm-up that never ends is an
  // error at its field before Start, not a schedule that never reaches its rate.
  const int64_t warmup = c.schedule.warmup_steps;
  m_settings->setPlanError("schedule.warmup_steps",
                           warmup > 0 && warmup >= plan.totalSteps
                               ? tr("the warm-up (%1 steps) is as long as the whole run (%2 steps planned, %3 per "
                                    "epoch); lower it or train for longer")
                                     .arg(warmup)
                                     .arg(plan.totalSteps)
                                     .arg(plan.stepsPerEpoch)
                               : QString());
  const LrSchedule schedule(c.schedule, c.optimizer.lr, plan.totalSteps);
  m_plots->setSchedulePreview(sampleSteps(plan.totalSteps, [&](int64_t i) { return schedule.lr(i); }),
                              {static_cast<double>(plan.stepsPerEpoch),
                               static_cast<double>(c.train.batch_size) * c.train.accumulation_steps});
  lr->setTitle(tr("Learning rate (%1 steps planned: %2 per epoch)").arg(plan.totalSteps).arg(plan.stepsPerEpoch));
}

bool MainWindow::dataChecked() const {
  return m_previewDone && m_previewKey == dataPreviewKey(m_settings->config());
}

// Reads the data the settings select on a worker thread (a folder of 60,000
// images takes a moment to scan); the result fills the Data tab, the plan
// and, on error, the inline message under the setting it is about.
void MainWindow::checkData(bool force) {
  const TrainConfig c = m_settings->config();
  const QString key = dataPreviewKey(c);
  if (!force && key == m_previewKey) return;
  m_previewKey = key;
  m_previewDone = false;
  m_settings->setDataError({}, {});
  m_data->showLoading(QString::fromStdString(c.data.root.empty() ? c.data.train_file : c.data.root));
  m_dataJob.start([c] { return makeDataPreview(c); },
                  [this, key](const DataPreview& p) { onDataPreview(key, p); });
}

void MainWindow::onDataPreview(const QString& key, const DataPreview& p) {
  if (key != m_previewKey) return;
  m_preview = p;
  m_previewDone = true;
  m_data->showPreview(p);
  // An error is the data's only while the settings themselves are valid.
  m_settings->setDataError(p.field, p.ok ? QString() : p.error);
  updateSchedulePreview();
  updateModelSummary();
}

void MainWindow::updateModelSummary() {
  const TrainConfig c = m_settings->config();
  if (!m_previewDone || !m_preview.ok) {
    m_model->showError(m_preview.ok ? tr("waiting for the data") : tr("the data cannot be read"));
    return;
  }
  nlohmann::json k = toJson(c)["model"];
  k["input"] = m_preview.description.input.text();
  k["classes"] = m_preview.description.classNames.size();
  QString sha;
  if (c.model.kind == "torchscript") {
    try {
      sha = QString::fromStdString(sha256OfFile(c.model.path));
    } catch (const std::exception& e) {
      m_model->showError(QString::fromStdString(e.what()));
      return;
    }
    if (!m_trusted.contains(sha)) {
      m_modelKey.clear();
      m_model->showUntrusted(QString::fromStdString(c.model.path), sha);
      return;
    }
    k["sha256"] = sha.toStdString();
  }
  const QString key = QString::fromStdString(k.dump());
  if (key == m_modelKey) return;
  m_modelKey = key;
  m_model->showLoading();
  m_modelJob.start(
      [c]() -> std::pair<ModelSummary, QString> {
        try {
          return {summarizeModel(c), QString()};
        } catch (const std::exception& e) {
          return {ModelSummary{}, QString::fromStdString(e.what())};
        }
      },
      [this](const std::pair<ModelSummary, QString>& r) {
        if (r.second.isEmpty())
          m_model->showSummary(r.first);
        else
          m_model->showError(r.second);
      });
}

void MainWindow::trust(const QString& sha256) {
  m_trusted.insert(sha256);
  if (m_restore) QSettings().setValue("trust/torchscript", QStringList(m_trusted.begin(), m_trusted.end()));
}

// Before a first start with a TorchScript file: its code runs, so the
// person says so (once per file content).
bool MainWindow::ensureTrusted(const TrainConfig& c) {
  if (c.model.kind != "torchscript") return true;
  QString sha;
  try {
    sha = QString::fromStdString(sha256OfFile(c.model.path));
  } catch (const std::exception& e) {
    showMessage(tr("Cannot start: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  if (m_trusted.contains(sha)) return true;
  if (!m_trustPrompt(QString::fromStdString(c.model.path), sha)) {
    showMessage(tr("Not started: %1 was not trusted to run").arg(QString::fromStdString(c.model.path)), true);
    return false;
  }
  trust(sha);
  return true;
}

// The form's settings may start a run (a training run, lr-find, batch-find):
// they are valid, and a TorchScript model in them is trusted.
bool MainWindow::formReadyToRun() {
  if (!m_settings->isValid()) {
    showMessage(tr("Fix the settings first: %1").arg(m_settings->errorTexts().join("; ")), true);
    return false;
  }
  if (!ensureTrusted(m_settings->config())) return false;
  m_liveResumed = false;
  return true;
}

bool MainWindow::startRun() {
  if (!formReadyToRun()) return false;
  if (m_restore) QSettings().setValue("settings/last", QString::fromStdString(m_settings->document().dump()));
  const TrainConfig config = m_settings->config();
  if (processDevices(config.distributed.devices).size() > 1) {
    showMessage(tr("Starting %1 processes through torchrun (distributed.devices %2); rank 0's curves show here.")
                    .arg(processDevices(config.distributed.devices).size())
                    .arg(QString::fromStdString(config.distributed.devices)));
    return m_controller->startProcesses(config);
  }
  return m_controller->start(config, windowStartOptions());
}

bool MainWindow::resumeRun(const QString& runDir) {
  if (!m_controller->parkedRunDir().isEmpty() && absolute(runDir) == absolute(m_controller->parkedRunDir())) {
    // The run set aside while its fork trained: back as the live run, going on.
    if (m_controller->active()) {
      showMessage(tr("A run is going; the paused run comes back when it is stopped or done."), true);
      return false;
    }
    m_controller->unpark();
    m_runs->setParkedRun(QString());
    m_liveRun = absolute(runDir);
    const RunInfo info = readRunInfo(runDir);
    m_plots->beginRun(m_liveRun, runLabel(info), liveShape(info));
    m_status->setStepsPerEpoch(liveShape(info).stepsPerEpoch);
    std::vector<MetricRecord> history;
    readRunHistory(info, history);
    m_plots->appendRecords(m_liveRun, history);
    m_plots->refreshLive();
    m_runs->setLiveRun(m_liveRun);
    m_settings->setLocked(true);
    setWindowTitle(tr("Training Studio — %1").arg(QFileInfo(runDir).fileName()));
    m_controller->resumeTraining();
    onStateChanged();
    showMessage(tr("Run %1 goes on from where it was paused").arg(QFileInfo(runDir).fileName()));
    return true;
  }
  if (!trustsRunFolder(runDir)) return false;
  const RunInfo info = readRunInfo(runDir);
  std::optional<TrainConfig> settings;
  try {
    settings = loadConfigFile((runDir + "/settings.json").toStdString());
  } catch (const std::exception&) {
    // The session names what is wrong with the folder.
  }
  // Set before the start (the first records may come at once), cleared when
  // it is refused: a live run's curves must not get another run's history.
  m_liveResumed = true;
  m_resumeDrawnUpTo = -1;
  if (!m_controller->resume(runDir, windowStartOptions())) {
    m_liveResumed = false;
    return false;
  }
  // At once, not with its first new records: the run's own settings in the
  // form (locked while it runs), its plan, and its history up to its
  // checkpoint (a stopped run's is at its last step; the history of a run
  // that ended otherwise is drawn up to where the new records start).
  if (settings) {
    m_settings->setConfig(*settings, tr("settings of %1").arg(QFileInfo(runDir).fileName()));
    m_runs->setRunsDir(QFileInfo(absolute(runDir)).absolutePath());
    if (info.totalSteps > 0) {
      const LrSchedule schedule(settings->schedule, settings->optimizer.lr, info.totalSteps);
      m_plots->setSchedulePreview(sampleSteps(info.totalSteps, [&](int64_t i) { return schedule.lr(i); }));
    }
  }
  if (info.status == "stopped" && info.steps > 0) {
    std::vector<MetricRecord> history, upTo;
    readRunHistory(info, history);
    for (const auto& r : history)
      if (r.step <= info.steps) upTo.push_back(r);
    m_plots->appendRecords(m_liveRun, upTo);
    m_plots->refreshLive();
    m_resumeDrawnUpTo = info.steps;
  }
  return true;
}

bool MainWindow::trustsRunFolder(const QString& runDir) {
  try {
    return ensureTrusted(loadConfigFile((runDir + "/settings.json").toStdString()));
  } catch (const std::exception&) {
    return true;  // the session names what is wrong with the folder
  }
}

StartOptions MainWindow::windowStartOptions() const {
  StartOptions options;
  options.stopAtStep = m_stopAtStep;
  return options;
}

bool MainWindow::continueRun(const QString& runDir, const ContinueOptions& more) {
  if (!trustsRunFolder(runDir)) return false;
  m_liveResumed = true;
  if (m_controller->continueRun(runDir, more, windowStartOptions())) return true;
  m_liveResumed = false;
  return false;
}

bool MainWindow::forkRun(const QString& parentDir, const ForkOptions& fork) {
  if (!trustsRunFolder(parentDir)) return false;
  ForkOptions from = fork;
  const bool liveParent = m_controller->active() && absolute(parentDir) == m_liveRun;
  if (liveParent) {
    // The paused run writes a checkpoint of its current weights and waits,
    // paused, while the fork trains from it.
    if (!m_controller->parkPaused()) return false;
    from.from = "last";
    m_runs->setParkedRun(parentDir);
  }
  m_liveResumed = true;  // its parent's curves up to the branch are drawn under it
  if (m_controller->fork(parentDir, from, windowStartOptions())) {
    if (liveParent)
      showMessage(tr("The fork trains from the paused run's current weights; %1 stays paused (Resume it in the "
                     "Runs list once the fork is done)").arg(QFileInfo(parentDir).fileName()));
    return true;
  }
  if (liveParent) {  // the fork did not start: the paused run is the live one again
    const QString why = m_lastMessage;
    m_runs->setParkedRun(QString());
    m_controller->unpark();
    onStateChanged();
    showMessage(why, true);
  }
  return false;
}

LrFindDialog* MainWindow::openLrFind() {
  if (!m_lrFind) {
    m_lrFind = new LrFindDialog(this);
    connect(m_lrFind, &LrFindDialog::startRequested, this, &MainWindow::startLrFind);
    connect(m_lrFind, &LrFindDialog::useRequested, this, [this](const QString& path, const QString& value) {
      if (m_controller->active()) {
        showMessage(tr("The settings are locked while a run trains; use the rate when it is done."), true);
        return;
      }
      m_settings->editField(path, value);
      showMessage(tr("%1 set to %2 (Edit > Undo takes it back)").arg(path, value));
    });
  }
  const TrainConfig c = m_settings->config();
  m_lrFind->setTarget(c.schedule.kind == "onecycle" ? "schedule.onecycle.max_lr" : "optimizer.lr");
  m_lrFind->show();
  m_lrFind->raise();
  return m_lrFind;
}

bool MainWindow::startLrFind(const LrFindOptions& options) {
  if (!formReadyToRun() || !m_controller->findLearningRate(m_settings->config(), options)) return false;
  m_lrFindRun = absolute(m_controller->runDir());
  openLrFind()->begin(m_lrFindRun);
  return true;
}

bool MainWindow::startBatchFind() {
  if (!formReadyToRun() || !m_controller->findBatchSize(m_settings->config(), {})) return false;
  m_batchFindRun = absolute(m_controller->runDir());
  showMessage(tr("Finding the largest micro-batch that fits (%1)…").arg(m_batchFindRun));
  return true;
}

bool MainWindow::addToQueue() {
  if (!m_settings->isValid()) {
    showMessage(tr("Fix the settings first: %1").arg(m_settings->errorTexts().join("; ")), true);
    return false;
  }
  try {
    QDir().mkpath(m_runs->runsDir());
    QueueItem item;
    item.config = m_settings->config();
    const auto items = studio::addToQueue(m_runs->queueFile().toStdString(), {item});
    const auto queued = std::count_if(items.begin(), items.end(), [](const QueueItem& i) { return i.status == "queued"; });
    showMessage(tr("Added to the queue (%1 queued): %2").arg(queued).arg(m_runs->queueFile()));
  } catch (const std::exception& e) {
    showMessage(QString::fromStdString(e.what()), true);
    return false;
  }
  m_runs->refresh();
  return true;
}

bool MainWindow::runQueue() {
  if (m_queueRunner) return true;
  if (m_controller->active()) {
    showMessage(tr("A run is going; the queue starts when it is stopped or done."), true);
    return false;
  }
  try {
    m_queueRunner = std::make_unique<QueueRunnerLock>(m_runs->queueFile().toStdString());
  } catch (const std::exception& e) {
    showMessage(QString::fromStdString(e.what()), true);
    return false;
  }
  startNextQueued();
  return m_queueRunner != nullptr;
}

void MainWindow::endQueue(const QString& message, bool error) {
  m_queueRunner.reset();
  m_queueItem = 0;
  m_runs->refresh();
  showMessage(message, error);
}

void MainWindow::startNextQueued() {
  if (!m_queueRunner) return;
  const std::string file = m_runs->queueFile().toStdString();
  std::optional<QueueItem> next;
  try {
    next = takeNextQueueItem(file);
  } catch (const std::exception& e) {
    endQueue(QString::fromStdString(e.what()), true);
    return;
  }
  if (!next) {
    endQueue(tr("The queue is done"));
    return;
  }
  const QString dir = QString::fromStdString(next->runDir);
  bool started = false;
  if (queueItemResumes(*next)) {
    started = resumeRun(dir);
  } else if (ensureTrusted(next->config)) {
    m_liveResumed = false;
    started = m_controller->start(next->config, windowStartOptions());
  }
  if (!started) {
    finishQueueItem(file, next->id, "failed", m_lastMessage.toStdString());
    QTimer::singleShot(0, this, &MainWindow::startNextQueued);
    return;
  }
  m_queueItem = next->id;
  setQueueItemRunDir(file, next->id, m_controller->runDir().toStdString());
  m_runs->refresh();
}

void MainWindow::askContinue(const QString& runDir) {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Continue %1").arg(QFileInfo(runDir).fileName()));
  auto* form = new QFormLayout(&dialog);
  auto* epochs = new QSpinBox;
  epochs->setRange(1, 100000);
  epochs->setValue(1);
  auto* schedule = new QComboBox;
  schedule->addItem(tr("restart: the run's schedule again over the new epochs"), "restart");
  schedule->addItem(tr("constant: one learning rate"), "constant");
  auto* lr = new QLineEdit;
  lr->setPlaceholderText(tr("default: optimizer.lr (restart) or the run's last (constant)"));
  form->addRow(new QLabel(tr("Train this run further in its own folder; its curves go on.")));
  form->addRow(tr("More epochs"), epochs);
  form->addRow(tr("Learning rate"), schedule);
  form->addRow(tr("Rate"), lr);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  ContinueOptions more;
  more.epochs = epochs->value();
  more.schedule = schedule->currentData().toString().toStdString();
  if (!lr->text().trimmed().isEmpty()) {
    bool ok = false;
    more.lr = lr->text().trimmed().toDouble(&ok);
    if (!ok || !(more.lr > 0)) {
      showMessage(tr("Continue: the learning rate must be a number > 0 (got \"%1\")").arg(lr->text()), true);
      return;
    }
  }
  continueRun(runDir, more);
}

void MainWindow::askFork(const QString& runDir) {
  TrainConfig parent;
  try {
    parent = loadConfigFile((runDir + "/settings.json").toStdString());
  } catch (const std::exception& e) {
    showMessage(QString::fromStdString(e.what()), true);
    return;
  }
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Fork %1").arg(QFileInfo(runDir).fileName()));
  auto* form = new QFormLayout(&dialog);
  auto* from = new QComboBox;
  const bool live = m_controller->active() && absolute(runDir) == m_liveRun;
  if (live) {
    from->addItem(tr("its current weights (step %1; it stays paused)").arg(m_controller->progress().step), "last");
  } else {
    from->addItem(tr("last checkpoint"), "last");
    if (QFile::exists(runDir + "/checkpoints/best.ckpt")) from->addItem(tr("best checkpoint"), "best");
  }
  QStringList steps = QDir(runDir + "/checkpoints").entryList({"step-*.ckpt"}, QDir::Files);
  std::sort(steps.begin(), steps.end(), [](const QString& a, const QString& b) {
    return a.mid(5).chopped(5).toLongLong() < b.mid(5).chopped(5).toLongLong();
  });
  if (!live)
    for (const QString& f : steps) from->addItem(f.chopped(5), f.chopped(5));
  // The form's settings that differ from the run's (the model and data stay
  // the run's), one key=value per line, to edit.
  QStringList changes;
  for (const auto& a : settingsAssignments(settingsChanges(parent, m_settings->config()))) {
    const QString line = QString::fromStdString(a);
    const bool modelOrData = (line.startsWith("model.") || line.startsWith("data.")) &&
                             !line.startsWith("data.augment_");
    if (!modelOrData) changes << line;
  }
  auto* edits = new QPlainTextEdit(changes.join("\n"));
  edits->setPlaceholderText(tr("one setting per line, e.g.\noptimizer.lr=0.01\ntrain.epochs=6"));
  form->addRow(new QLabel(tr("A new run from this run's weights with these settings changed (from the form; "
                             "edit them). The model and the data stay the run's.")));
  form->addRow(tr("From"), from);
  form->addRow(tr("Changes"), edits);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  ForkOptions fork;
  fork.from = from->currentData().toString().toStdString();
  for (const QString& line : edits->toPlainText().split('\n', Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) fork.overrides.push_back(line.trimmed().toStdString());
  forkRun(runDir, fork);
}

void MainWindow::onRecords(const QString& runDir, const std::vector<MetricRecord>& records) {
  const QString dir = absolute(runDir);
  if (m_liveResumed) {
    // A resumed or continued run goes on in its metrics.csv, a fork from its
    // parent's: draw what came before under the new points.
    m_liveResumed = false;
    std::vector<MetricRecord> before;
    readRunHistory(readRunInfo(dir), before);
    const int64_t from = records.front().step;
    std::vector<MetricRecord> earlier;
    for (const auto& r : before)
      if (r.step < from && r.step > m_resumeDrawnUpTo) earlier.push_back(r);
    m_resumeDrawnUpTo = -1;
    m_plots->appendRecords(dir, earlier);
  }
  m_plots->appendRecords(dir, records);
  if (m_lrFind && dir == m_lrFindRun) m_lrFind->addRecords(records);
  for (const auto& r : records)
    if (r.kind == RecordKind::Eval) m_eval->evaluationArrived(dir, r.step);
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->kind == RecordKind::Train) {
      m_toolbar->setCurrentLearningRate(it->lr);
      break;
    }
  m_plots->setMemoryIsGpu(m_controller->progress().device.rfind("cuda", 0) == 0);
  m_plots->refreshLive();
}

void MainWindow::onStateChanged() {
  m_toolbar->setRunState(m_controller->state(), m_controller->active());
  m_runs->setLivePaused(m_controller->active() && m_controller->state() == SessionState::Paused);
  m_status->showProgress(m_controller->progress(), m_controller->lastTrainRecord(),
                           m_controller->receivedRecords());
}

void MainWindow::onRunFinished(const RunSummary& s) {
  if (m_queueRunner && m_queueItem != 0) {
    try {
      finishQueueItem(m_runs->queueFile().toStdString(), m_queueItem, s.status, s.error);
    } catch (const std::exception& e) {
      showMessage(QString::fromStdString(e.what()), true);
    }
    m_queueItem = 0;
    if (s.status == "stopped") {
      endQueue(tr("Queue stopped; Run queue resumes this run first"));
    } else {
      QTimer::singleShot(0, this, &MainWindow::startNextQueued);
    }
  }
  if (m_lrFind && absolute(QString::fromStdString(s.runDir)) == m_lrFindRun) {
    m_lrFind->finish(s);
    m_lrFindRun.clear();
  }
  if (!m_batchFindRun.isEmpty() && absolute(QString::fromStdString(s.runDir)) == m_batchFindRun) {
    m_batchFindRun.clear();
    if (s.status == "completed" && s.batchFindMicro > 0) {
      const TrainConfig c = m_settings->config();
      auto* box = new QMessageBox(QMessageBox::Question, tr("Largest batch"),
                                  tr("The largest micro-batch whose training step fits on %1 is %2.\n\nFor the "
                                     "effective batch of %3: micro-batch %4 with %5 accumulation step(s). Use them?")
                                      .arg(QString::fromStdString(s.device))
                                      .arg(s.batchFindLargest)
                                      .arg(int64_t(c.train.batch_size) * c.train.accumulation_steps)
                                      .arg(s.batchFindMicro)
                                      .arg(s.batchFindAccumulation),
                                  QMessageBox::Yes | QMessageBox::No, this);
      box->setObjectName("batchFindResult");
      box->setAttribute(Qt::WA_DeleteOnClose);
      const QString micro = QString::number(s.batchFindMicro), accumulation = QString::number(s.batchFindAccumulation);
      connect(box, &QMessageBox::finished, this, [this, micro, accumulation](int answer) {
        if (answer != QMessageBox::Yes) return;
        m_settings->editField("train.batch_size", micro);
        m_settings->editField("train.accumulation_steps", accumulation);
        showMessage(tr("train.batch_size %1, train.accumulation_steps %2 (Edit > Undo takes them back)")
                        .arg(micro, accumulation));
      });
      box->open();
    }
  }
  m_settings->setLocked(false);
  m_toolbar->setRunState(m_controller->state(), false);
  m_runs->setLiveRun(QString());
  m_plots->refresh();
  QString text = tr("Run %1 after %2 of %3 steps").arg(QString::fromStdString(s.status)).arg(s.steps).arg(s.totalSteps);
  if (std::isfinite(s.testAccuracy)) text += tr("; test accuracy %1 %").arg(s.testAccuracy * 100, 0, 'f', 2);
  if (!s.error.empty()) text += ": " + QString::fromStdString(s.error);
  showMessage(text, s.status == "failed");
  notify(tr("Run %1 %2").arg(QFileInfo(QString::fromStdString(s.runDir)).fileName(), QString::fromStdString(s.status)),
         text, s.status == "failed");
  if (m_restore) {
    QSettings settings;
    QStringList recent = settings.value("runs/recent").toStringList();
    const QString dir = absolute(QString::fromStdString(s.runDir));
    recent.removeAll(dir);
    recent.prepend(dir);
    settings.setValue("runs/recent", recent.mid(0, 20));
  }
  Q_EMIT runFinished(s);
}

void MainWindow::showRuns(const QStringList& selected) {
  // The live run always stays on screen: runs selected during it are drawn
  // over it, never instead of it.
  QStringList runDirs = selected;
  if (m_controller->active() && !m_liveRun.isEmpty()) {
    runDirs.removeIf([this](const QString& d) { return absolute(d) == m_liveRun; });
    runDirs.prepend(m_liveRun);
  }
  std::vector<RunCurves> runs;
  QStringList problems;
  bool gpu = false;
  std::vector<RunInfo> infos;
  for (const QString& d : runDirs) infos.push_back(readRunInfo(d));  // one read of each run's settings and summary
  // Overlaid, each legend entry starts with the run's title or name, short
  // enough to read whole; runs of the same name add when they started.
  QStringList names, labels;
  for (const RunInfo& info : infos) names << (!info.title.isEmpty() ? info.title : info.name);
  for (size_t i = 0; i < infos.size(); ++i) {
    const QString& name = names[static_cast<qsizetype>(i)];
    labels << (infos.size() == 1 || name.isEmpty() || names.count(name) > 1 ? runLabel(infos[i]) : name);
  }
  const QStringList firstTry = labels;  // runs started in the same second: their folders tell them apart
  for (size_t i = 0; i < infos.size(); ++i)
    if (firstTry.count(firstTry[static_cast<qsizetype>(i)]) > 1)
      labels[static_cast<qsizetype>(i)] = names[static_cast<qsizetype>(i)] + " (" + infos[i].folderName + ")";
  for (size_t i = 0; i < infos.size(); ++i) {
    const RunInfo& info = infos[i];
    const QString d = info.dir;
    gpu = gpu || info.device.startsWith("cuda");
    RunCurves curves{absolute(d), labels[static_cast<qsizetype>(i)], {}, {info.stepsPerEpoch, info.samplesPerStep}};
    if (curves.key == m_liveRun && m_controller->active()) {
      curves.records = m_controller->records();
    } else {
      QString error;
      if (!readRunHistory(info, curves.records, &error)) problems << error;
    }
    runs.push_back(std::move(curves));
  }
  m_plots->setMemoryIsGpu(gpu);
  m_plots->showRuns(runs);
  if (runs.size() == 1) {
    m_eval->showRun(runs.front().key, runs.front().label);
  } else if (runs.size() > 1) {
    QStringList dirs, labels;
    for (const auto& r : runs) {
      dirs << r.key;
      labels << r.label;
    }
    m_eval->compareRuns(dirs, labels);
  }
  if (!problems.isEmpty()) showMessage(tr("Some metrics could not be read: %1").arg(problems.join("; ")), true);
}

QStringList MainWindow::exportRunTo(const QString& runDir, const QString& outDir, QString* error) {
  QStringList written;
  try {
    const ExportResult r = exportRun(runDir.toStdString(), outDir.toStdString(), "best");
    for (const auto& f : r.files) written << QString::fromStdString(f);
    if (!r.note.empty()) showMessage(QString::fromStdString(r.note));
    for (const char* name : {"metrics.csv", "summary.json", "log.txt"}) {
      const QString from = runDir + "/" + name, to = outDir + "/" + name;
      if (!QFile::exists(from)) continue;
      QFile::remove(to);
      if (!QFile::copy(from, to)) throw std::runtime_error(("cannot write " + to).toStdString());
      written << to;
    }
    // The plots of exactly this run.
    if (m_plots->runKeys() != QStringList{absolute(runDir)}) showRuns({runDir});
    const QStringList failed = m_plots->exportPlots(outDir, m_chartExportSize, exportCaption(runDir));
    if (!failed.isEmpty()) throw std::runtime_error(("cannot write " + failed.join(", ")).toStdString());
    for (auto* c : m_plots->charts())
      written << outDir + "/" + c->objectName() + ".png" << outDir + "/" + c->objectName() + ".pdf";
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
  return written;
}

void MainWindow::exportSelectedRun(const QString& runDir) {
  const QString out = QFileDialog::getExistingDirectory(this, tr("Export %1 to folder").arg(QFileInfo(runDir).fileName()));
  if (out.isEmpty()) return;
  QString error;
  const QStringList files = exportRunTo(runDir, out, &error);
  if (files.isEmpty())
    showMessage(tr("Export failed: %1").arg(error), true);
  else
    showMessage(tr("Exported %1 files to %2 (model.pt loads in Python with torch.load)").arg(files.size()).arg(out));
}

void MainWindow::setChartExportSize(const QSize& size) {
  m_chartExportSize = size.expandedTo(QSize(200, 150));
  if (m_restore) QSettings().setValue("export/chartSize", m_chartExportSize);
  showMessage(tr("Charts are exported at %1 x %2 pixels").arg(m_chartExportSize.width()).arg(m_chartExportSize.height()));
}

bool MainWindow::loadSettingsFile(const QString& path) {
  QString error;
  if (m_settings->loadFile(path, &error)) return true;
  showFailure(tr("Settings not loaded"), error);
  return false;
}

// A failure the person must see even with the status bar out of view: a
// dialog that does not block the window (runs go on), the status bar and the
// log at error level.
void MainWindow::showFailure(const QString& title, const QString& text) {
  showMessage(text, true);
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
  box->setObjectName("failureDialog");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

HelpDialog* MainWindow::openGuide() {
  auto* dialog = findChild<HelpDialog*>("guide", Qt::FindDirectChildrenOnly);
  if (!dialog) dialog = new HelpDialog(this);
  dialog->showGuide();
  dialog->show();
  dialog->raise();
  return dialog;
}

void MainWindow::notify(const QString& title, const QString& text, bool failure) {
  if (!m_notifyAction || !m_notifyAction->isChecked()) return;
  m_lastNotification = title;
  if (isActiveWindow() && !isMinimized()) return;  // the person is looking at the window
  QApplication::alert(this);
  if (!QSystemTrayIcon::isSystemTrayAvailable() || !QSystemTrayIcon::supportsMessages()) return;
  if (!m_tray) {
    QIcon icon = QIcon::fromTheme("training-studio", windowIcon());
    if (icon.isNull()) icon = style()->standardIcon(QStyle::SP_MessageBoxInformation);
    m_tray = new QSystemTrayIcon(icon, this);
    m_tray->setToolTip(tr("Training Studio"));
    connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
      showNormal();
      raise();
      activateWindow();
    });
  }
  m_tray->show();
  m_tray->showMessage(title, text, failure ? QSystemTrayIcon::Critical : QSystemTrayIcon::Information, 15000);
  QTimer::singleShot(20000, m_tray, &QSystemTrayIcon::hide);
}

void MainWindow::showMessage(const QString& text, bool error) {
  m_lastMessage = text;
  m_status->showMessage(text, error ? 0 : 8000);
  if (error)
    log::error(text.toStdString());
  else
    log::info(text.toStdString());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_controller->active()) {
    showMessage(tr("Stopping the run and writing its checkpoint…"));
    QApplication::processEvents();
    m_controller->stopAndWait();
  }
  if (m_restore) saveWindowState();
  event->accept();
}

void MainWindow::saveWindowState() {
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  s.setValue("settings/last", QString::fromStdString(m_settings->document().dump()));
  s.setValue("view/smoothing", m_plots->smoothing());
  s.setValue("view/xAxis", static_cast<int>(m_plots->xAxis()));
  for (MetricChart* c : m_plots->charts())
    if (c != m_plots->chart(PlotsPanel::Loss)) s.setValue("view/smoothing/" + c->objectName(), c->smoothing());
}

RunShape MainWindow::liveShape(const RunInfo& info) const {
  RunShape shape{info.stepsPerEpoch, info.samplesPerStep};
  // A run that has not read its data yet: the plan of the form's settings,
  // which it runs, on the data the form checked.
  const TrainConfig c = m_settings->config();
  if (shape.stepsPerEpoch <= 0 && m_previewDone && m_preview.ok && m_previewKey == dataPreviewKey(c))
    shape.stepsPerEpoch = static_cast<double>(planSteps(c, m_preview.description.trainSize()).stepsPerEpoch);
  return shape;
}

void MainWindow::restoreWindowState() {
  QSettings s;
  restoreGeometry(s.value("window/geometry").toByteArray());
  restoreState(s.value("window/state").toByteArray());
  m_plots->setSmoothing(s.value("view/smoothing", m_plots->smoothing()).toDouble());
  const int x = s.value("view/xAxis", 0).toInt();
  if (x >= PlotsPanel::Steps && x <= PlotsPanel::WallTime) m_plots->setXAxis(static_cast<PlotsPanel::XAxis>(x));
  for (MetricChart* c : m_plots->charts())
    if (c != m_plots->chart(PlotsPanel::Loss)) c->setSmoothing(s.value("view/smoothing/" + c->objectName(), 0.0).toDouble());
  const QSize size = s.value("export/chartSize", m_chartExportSize).toSize();
  if (size.width() >= 200 && size.height() >= 150) m_chartExportSize = size;
  applyTheme(themeFromName(s.value("view/theme", "system").toString()));
}

}  // namespace studio::ui
