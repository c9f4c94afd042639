#include "ui/window/run_lifecycle.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QTimer>
#include <QUndoStack>

#include <cstdlib>

#include "studio/devices.h"
#include "studio/lr_schedule.h"
#include "studio/run_layout.h"
#include "studio/settings_schema.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/charts/system_monitor.h"
#include "ui/common/paths.h"
#include "ui/evaluation/evaluation_panel.h"
#include "ui/runs/run_catalog.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/preview_coordinator.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_status_bar.h"
#include "ui/window/run_toolbar.h"
#include "ui/window/trust_store.h"

namespace studio::ui {
namespace {

// The evaluation chart's title and axis for these task kinds' figures.
void nameScoreChart(PlotsPanel& plots, const QStringList& taskKinds) {
  const auto [title, axis] = scoreChartText(taskKinds);
  plots.chart(PlotsPanel::Accuracy)->setTitle(title);
  plots.chart(PlotsPanel::Accuracy)->setYLabel(axis);
}

}  // namespace

RunLifecycle::RunLifecycle(RunController* controller, const Panels& panels, PreviewCoordinator* preview,
                           TrustStore* trust, bool persist, QObject* parent)
    : QObject(parent), m_controller(controller), m_p(panels), m_preview(preview), m_trust(trust), m_persist(persist) {
  connect(m_controller, &RunController::runStarted, this, &RunLifecycle::onStarted);
  connect(m_controller, &RunController::recordsArrived, this, &RunLifecycle::onRecords);
  connect(m_controller, &RunController::stateChanged, this, &RunLifecycle::onStateChanged);
  connect(m_controller, &RunController::failed, this, [this](const QString& t) { m_lastFailure = t; });
  // An edit of the form after a run: the charts show the new plan, not it
  // under the plan (a run chosen in the Runs list stays).
  connect(m_p.settings->undoStack(), &QUndoStack::indexChanged, this, [this] {
    if (!m_controller->active() && !m_liveRun.isEmpty() && m_p.plots->runKeys() == QStringList{m_liveRun}) showRuns({});
  });
  auto* statusTimer = new QTimer(this);
  statusTimer->setInterval(250);
  connect(statusTimer, &QTimer::timeout, this, &RunLifecycle::showLiveFigures);
  statusTimer->start();
  // The machine's figures for the live run, once a second (Utilisation).
  m_monitor = std::make_unique<SystemMonitor>();
  m_p.plots->setSystemNote(m_monitor->gpuFigures() ? tr("GPU figures through NVML") : m_monitor->noGpuReason());
  auto* monitorTimer = new QTimer(this);
  monitorTimer->setInterval(1000);
  connect(monitorTimer, &QTimer::timeout, this, [this] {
    if (!m_controller->active() || m_liveRun.isEmpty()) return;
    const Progress p = m_controller->progress();
    int gpu = -1;
    if (p.device.rfind("cuda", 0) == 0) gpu = p.device.size() > 5 ? std::atoi(p.device.c_str() + 5) : 0;
    const SystemMonitor::Sample s = m_monitor->sample(gpu);
    m_p.plots->addSystemSample(m_liveRun, p.step, s.cpuPercent, s.gpuPercent, s.gpuMemoryPercent);
    m_p.plots->chart(PlotsPanel::Utilisation)->refresh();
  });
  monitorTimer->start();
}

RunLifecycle::~RunLifecycle() = default;

StartOptions RunLifecycle::startOptions() const {
  StartOptions options;
  options.stopAtStep = m_stopAtStep;
  return options;
}

bool RunLifecycle::refuse(const QString& why) {
  m_lastFailure = why;
  Q_EMIT message(why, true);
  return false;
}

bool RunLifecycle::launch(bool history, const std::function<bool()>& start) {
  m_history = history ? std::optional<int64_t>(-1) : std::nullopt;
  if (start()) return true;
  m_history.reset();
  return false;
}

bool RunLifecycle::formReadyToRun() {
  if (!m_p.settings->isValid())
    return refuse(tr("Fix the settings first: %1").arg(m_p.settings->errorTexts().join("; ")));
  QString why;
  if (!m_trust->ensure(m_p.settings->config(), &why)) return refuse(why);
  return true;
}

bool RunLifecycle::startFromForm() {
  if (!formReadyToRun()) return false;
  if (m_persist) QSettings().setValue("settings/last", QString::fromStdString(m_p.settings->document().dump()));
  const TrainConfig config = m_p.settings->config();
  const size_t processes = processDevices(config.distributed.devices).size();
  if (processes > 1) {
    Q_EMIT message(tr("Starting %1 processes through torchrun (distributed.devices %2); rank 0's curves show here.")
                       .arg(processes)
                       .arg(QString::fromStdString(config.distributed.devices)),
                   false);
    return launch(false, [&] { return m_controller->startProcesses(config); });
  }
  return launch(false, [&] { return m_controller->start(config, startOptions()); });
}

bool RunLifecycle::start(const TrainConfig& config) {
  QString why;
  if (!m_trust->ensure(config, &why)) return refuse(why);
  return launch(false, [&] { return m_controller->start(config, startOptions()); });
}

bool RunLifecycle::startProbe(const std::function<bool()>& begin) { return formReadyToRun() && launch(false, begin); }

bool RunLifecycle::resume(const QString& runDir) {
  const QString parked = m_controller->parkedRunDir();
  if (!parked.isEmpty() && absolute(runDir) == absolute(parked)) return unpark(runDir);
  QString why;
  if (!m_trust->ensureRunFolder(runDir, &why)) return refuse(why);
  const RunInfo info = readRunInfo(runDir);
  std::optional<TrainConfig> settings;
  try {
    settings = loadConfigFile((runDir + "/" + run_files::kSettings).toStdString());
  } catch (const std::exception&) {
    // The session names what is wrong with the folder.
  }
  if (!launch(true, [&] { return m_controller->resume(runDir, startOptions()); })) return false;
  // At once, not with its first new records: the run's own settings in the
  // form (locked while it runs), its plan, and its history up to its
  // checkpoint (a stopped run's is at its last step; the history of a run
  // that ended otherwise is drawn up to where the new records start).
  if (settings) {
    m_p.settings->setConfig(*settings, tr("settings of %1").arg(QFileInfo(runDir).fileName()));
    m_p.runs->setRunsDir(QFileInfo(absolute(runDir)).absolutePath());
    if (info.totalSteps > 0) {
      const LrSchedule schedule(settings->schedule, settings->optimizer.lr, info.totalSteps);
      m_p.plots->setSchedulePreview(sampleSteps(info.totalSteps, [&](int64_t i) { return schedule.lr(i); }));
    }
  }
  if (info.ended == RunStatus::stopped && info.steps > 0) {
    std::vector<MetricRecord> history, upTo;
    readRunHistory(info, history);
    for (const auto& r : history)
      if (r.step <= info.steps) upTo.push_back(r);
    m_p.plots->appendRecords(m_liveRun, upTo);
    m_p.plots->refreshLive();
    m_history = info.steps;
  }
  return true;
}

// The run set aside while its fork trained: back as the live run, going on.
bool RunLifecycle::unpark(const QString& runDir) {
  if (m_controller->active())
    return refuse(tr("A run is going; the paused run comes back when it is stopped or done."));
  m_controller->unpark();
  m_p.runs->setParkedRun(QString());
  beginLive(runDir);
  std::vector<MetricRecord> history;
  readRunHistory(readRunInfo(runDir), history);
  m_p.plots->appendRecords(m_liveRun, history);
  m_p.plots->refreshLive();
  m_controller->resumeTraining();
  onStateChanged();
  Q_EMIT message(tr("Run %1 goes on from where it was paused").arg(QFileInfo(runDir).fileName()), false);
  return true;
}

bool RunLifecycle::continueRun(const QString& runDir, const ContinueOptions& more) {
  QString why;
  if (!m_trust->ensureRunFolder(runDir, &why)) return refuse(why);
  return launch(true, [&] { return m_controller->continueRun(runDir, more, startOptions()); });
}

bool RunLifecycle::fork(const QString& parentDir, const ForkOptions& fork) {
  QString why;
  if (!m_trust->ensureRunFolder(parentDir, &why)) return refuse(why);
  ForkOptions from = fork;
  const bool liveParent = m_controller->active() && absolute(parentDir) == m_liveRun;
  if (liveParent) {
    // The paused run writes a checkpoint of its current weights and waits,
    // paused, while the fork trains from it.
    if (!m_controller->parkPaused()) return false;
    from.from = "last";
    m_p.runs->setParkedRun(parentDir);
  }
  // Its parent's curves up to the branch are drawn under it.
  if (launch(true, [&] { return m_controller->fork(parentDir, from, startOptions()); })) {
    if (liveParent)
      Q_EMIT message(tr("The fork trains from the paused run's current weights; %1 stays paused (Resume it in the "
                        "Runs list once the fork is done)")
                         .arg(QFileInfo(parentDir).fileName()),
                     false);
    return true;
  }
  if (liveParent) {  // the fork did not start: the paused run is the live one again
    const QString failure = m_lastFailure;
    m_p.runs->setParkedRun(QString());
    m_controller->unpark();
    onStateChanged();
    refuse(failure);
  }
  return false;
}

void RunLifecycle::markProbe(const QString& kind) {
  m_p.status->setProbe(kind);
  onStateChanged();
}

void RunLifecycle::beginLive(const QString& runDir) {
  m_liveRun = absolute(runDir);
  m_p.status->setProbe(QString());
  const RunInfo info = readRunInfo(runDir);
  const RunShape shape = m_preview->liveShape(info);
  m_p.plots->beginRun(m_liveRun, runLabel(info), shape);
  TrainConfig c;
  try {  // a divergence warning names the setting that sets this run's rate
    c = loadConfigFile((m_liveRun + "/" + run_files::kSettings).toStdString());
  } catch (const std::exception&) {
    c = m_p.settings->config();  // not written yet (a new run's thread writes it): the form's settings are the run's
  }
  m_p.plots->setRateSetting(m_liveRun, QString::fromStdString(learningRateSetting(c)));
  // The loss axis names this run's loss (MSE for a regression), never the first run's.
  m_p.plots->chart(PlotsPanel::Loss)
      ->setYLabel(
          lossAxisLabel(QString::fromStdString(c.task.kind.name()), QString::fromStdString(c.loss.kind.name())));
  nameScoreChart(*m_p.plots, {QString::fromStdString(c.task.kind.name())});
  m_p.status->setStepsPerEpoch(shape.stepsPerEpoch);
  m_p.runs->setLiveRun(m_liveRun);
  m_p.settings->setLocked(true);
  // Qt adds the application's name (QGuiApplication::applicationDisplayName).
  Q_EMIT titleChanged(QFileInfo(runDir).fileName());
}

void RunLifecycle::onStarted(const QString& dir) {
  beginLive(dir);
  m_p.eval->showRun(m_liveRun, runLabel(readRunInfo(dir)));
  m_p.status->clearProgress();
  Q_EMIT message(tr("Run started: %1").arg(dir), false);
}

void RunLifecycle::onRecords(const QString& runDir, const std::vector<MetricRecord>& records) {
  const QString dir = absolute(runDir);
  if (m_history) {
    // A resumed or continued run goes on in its metrics.csv, a fork from its
    // parent's: draw what came before under the new points.
    const int64_t drawnUpTo = *m_history;
    m_history.reset();
    std::vector<MetricRecord> before;
    readRunHistory(readRunInfo(dir), before);
    const int64_t from = records.front().step;
    std::vector<MetricRecord> earlier;
    for (const auto& r : before)
      if (r.step < from && r.step > drawnUpTo) earlier.push_back(r);
    m_p.plots->appendRecords(dir, earlier);
  }
  m_p.plots->appendRecords(dir, records);
  for (const auto& r : records)
    if (r.kind == RecordKind::Eval) m_p.eval->evaluationArrived(dir, r.step);
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->kind == RecordKind::Train) {
      m_p.toolbar->setCurrentLearningRate(it->lr);
      break;
    }
  m_p.plots->setMemoryIsGpu(m_controller->progress().device.rfind("cuda", 0) == 0);
  m_p.plots->refreshLive();
}

void RunLifecycle::onStateChanged() {
  m_p.toolbar->setRunState(m_controller->state(), m_controller->active());
  m_p.runs->setLivePaused(m_controller->active() && m_controller->state() == SessionState::Paused);
  m_p.status->showProgress(m_controller->progress(), m_controller->lastTrainRecord(), m_controller->receivedRecords());
}

void RunLifecycle::showLiveFigures() {
  // The live run's epochs, once it has read its data (its settings.json
  // then says how many examples): the epoch bar and the x-axis in epochs.
  if (m_controller->active() && !m_liveRun.isEmpty() && m_p.status->stepsPerEpoch() <= 0) {
    const RunInfo info = readRunInfo(m_liveRun);
    if (info.stepsPerEpoch > 0) {
      m_p.status->setStepsPerEpoch(info.stepsPerEpoch);
      m_p.plots->setRunShape(m_liveRun, {info.stepsPerEpoch, info.samplesPerStep});
    }
  }
  if (m_controller->active()) {
    const Progress p = m_controller->progress();
    m_p.status->showProgress(p, m_controller->lastTrainRecord(), m_controller->receivedRecords());
    m_p.runs->setLiveProgress(p.step, p.totalSteps);
  }
}

void RunLifecycle::forgetRuns(const QStringList& runDirs) {
  QStringList gone;
  for (const QString& d : runDirs) gone << absolute(d);
  QStringList kept;
  for (const QString& key : m_p.plots->runKeys())
    if (!gone.contains(absolute(key))) kept << key;
  if (kept.size() != m_p.plots->runKeys().size()) showRuns(kept);
}

void RunLifecycle::runEnded() {
  m_p.settings->setLocked(false);
  m_p.toolbar->setRunState(m_controller->state(), false);
  m_p.runs->setLiveRun(QString());
  m_p.plots->refresh();
}

void RunLifecycle::showRuns(const QStringList& selected) {
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
    gpu = gpu || info.device.startsWith("cuda");
    RunCurves curves{
        absolute(info.dir), labels[static_cast<qsizetype>(i)], {}, {info.stepsPerEpoch, info.samplesPerStep}};
    if (curves.key == m_liveRun && m_controller->active()) {
      curves.records = m_controller->records();
    } else {
      QString error;
      if (!readRunHistory(info, curves.records, &error)) problems << error;
    }
    // A past run shown alone draws its own plan: its schedule over its own
    // length (a fork's, a search trial's), not the form's.
    if (infos.size() == 1 && !(curves.key == m_liveRun && m_controller->active()) && info.totalSteps > 0) {
      try {
        const TrainConfig c = loadConfigFile((info.dir + "/" + run_files::kSettings).toStdString());
        const LrSchedule schedule(c.schedule, c.optimizer.lr, info.totalSteps);
        curves.plan = sampleSteps(info.totalSteps, [&](int64_t k) { return schedule.lr(k); });
        curves.planTitle = tr("Learning rate (this run's plan: %1 steps)").arg(info.totalSteps);
      } catch (const std::exception&) {
        // Unreadable settings: no plan of its own (the curves say what was done).
      }
    }
    runs.push_back(std::move(curves));
  }
  m_p.plots->setMemoryIsGpu(gpu);
  // The loss axis: the runs' loss, or each run's when they differ.
  QStringList losses;
  for (const RunInfo& info : infos) {
    const QString loss =
        lossAxisLabel(info.settings.value("task.kind", "classification"), info.settings.value("loss.kind", "auto"));
    if (!losses.contains(loss)) losses << loss;
  }
  if (!losses.isEmpty())
    m_p.plots->chart(PlotsPanel::Loss)
        ->setYLabel(losses.size() == 1 ? losses.front() : tr("each run's loss: %1").arg(losses.join(", ")));
  // The evaluation chart names the figures of the runs' tasks (a detector's
  // mAP, not "accuracy or R²").
  QStringList tasks;
  for (const RunInfo& info : infos) tasks << info.settings.value("task.kind", "classification");
  if (!infos.empty()) nameScoreChart(*m_p.plots, tasks);
  m_p.plots->showRuns(runs);
  if (runs.size() == 1) {
    m_p.eval->showRun(runs.front().key, runs.front().label);
  } else if (runs.size() > 1) {
    QStringList dirs, curveLabels;
    for (const auto& r : runs) {
      dirs << r.key;
      curveLabels << r.label;
    }
    m_p.eval->compareRuns(dirs, curveLabels);
  }
  if (!problems.isEmpty()) Q_EMIT message(tr("Some metrics could not be read: %1").arg(problems.join("; ")), true);
}

}  // namespace studio::ui
