#include "ui/search/study_panel.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "qcustomplot.h"
#include "studio/errors.h"
#include "studio/search_space.h"
#include "ui/search/study_json.h"

namespace studio::ui {

using namespace study_json;

namespace {

// "key=value" as --set takes it (every digit of a float kept).
std::string assignment(const std::string& key, const nlohmann::json& v) {
  if (v.is_string()) return key + "=" + v.get<std::string>();
  return key + "=" + v.dump();
}

}  // namespace

StudyPanel::StudyPanel(QWidget* parent)
    : QWidget(parent),
      m_poll(new QTimer(this)),
      m_status(new QLabel(tr("No search yet: Search… sets one up."))),
      m_search(new QPushButton(tr("Search…"))),
      m_open(new QPushButton(tr("Open study…"))),
      m_stop(new QPushButton(tr("Stop"))),
      m_resume(new QPushButton(tr("Resume"))),
      m_trainBest(new QPushButton(tr("Train best"))),
      m_table(new QTableWidget),
      m_tabs(new QTabWidget),
      m_best(new QCustomPlot),
      m_parallel(new QCustomPlot),
      m_importance(new QCustomPlot) {
  setObjectName("studyPanel");
  m_status->setObjectName("studyStatus");
  m_status->setWordWrap(true);
  m_search->setToolTip(tr("A hyperparameter search over some of the form's settings (Optuna)"));
  m_stop->setToolTip(tr("Stop the search: its trials stop with a checkpoint, and Resume continues them"));
  m_trainBest->setToolTip(
      tr("Put the best trial's settings (without the trial-only settings) in the form and "
         "start them"));
  auto* buttons = new QHBoxLayout;
  // Joining a study in a database is Run > Join a study… (askToJoin): a button more here would widen the
  // window past what test_window_form holds it to.
  for (QPushButton* b : {m_search, m_open, m_stop, m_resume, m_trainBest}) buttons->addWidget(b);
  buttons->addStretch(1);
  m_table->setObjectName("studyTrials");
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->setSortingEnabled(false);
  m_tabs->addTab(m_best, tr("Best so far"));
  m_tabs->addTab(m_parallel, tr("Parallel coordinates"));
  m_tabs->addTab(m_importance, tr("Importance"));
  m_parallel->setToolTip(tr("Drag along an axis to select the trials in that span"));
  // No minimum height of their own: the dock shares the window's bottom with the Log and Queue, and the
  // window must fit a 1280x720 screen (test_window_review).
  for (QCustomPlot* p : {m_best, m_parallel, m_importance}) p->setMinimumSize(120, 60);
  auto* split = new QSplitter;
  split->addWidget(m_table);
  split->addWidget(m_tabs);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(m_status);
  layout->addWidget(split, 1);

  m_best->xAxis->setLabel(tr("trial"));
  QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);  // trial numbers are whole
  whole->setTickStep(1);
  whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  m_best->xAxis->setTicker(whole);
  m_parallel->yAxis->setRange(-0.08, 1.08);
  m_parallel->yAxis->setTicks(false);
  m_parallel->yAxis->setTickLabels(false);
  connect(m_search, &QPushButton::clicked, this, &StudyPanel::searchRequested);
  connect(m_open, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("A study's folder (search-NAME)"), m_runsDir);
    if (!dir.isEmpty()) openStudy(dir);
  });
  connect(m_stop, &QPushButton::clicked, this, &StudyPanel::stop);
  connect(m_resume, &QPushButton::clicked, this, &StudyPanel::resume);
  connect(m_trainBest, &QPushButton::clicked, this, &StudyPanel::trainBestRequested);
  connect(m_table, &QTableWidget::itemSelectionChanged, this, [this] {
    plotParallel();
    Q_EMIT runsSelected(selectedRunDirs());
  });
  connect(m_poll, &QTimer::timeout, this, &StudyPanel::refresh);
  m_poll->setInterval(500);

  // Brushing: a drag along an axis of the parallel coordinates.
  connect(m_parallel, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    const double x = m_parallel->xAxis->pixelToCoord(e->pos().x());
    const int axis = static_cast<int>(std::lround(x));
    m_brushAxis = std::abs(x - axis) < 0.35 && axis >= 0 && axis < axisNames(m_study).size() ? axis : -1;
    m_brushFrom = m_parallel->yAxis->pixelToCoord(e->pos().y());
  });
  connect(m_parallel, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
    if (m_brushAxis < 0) return;
    const double to = m_parallel->yAxis->pixelToCoord(e->pos().y());
    brush(m_brushAxis, std::min(m_brushFrom, to), std::max(m_brushFrom, to));
    m_brushAxis = -1;
  });
  updateButtons();
}

StudyPanel::~StudyPanel() {
  if (m_process && m_process->state() != QProcess::NotRunning) {
    m_process->terminate();  // its trials stop with a checkpoint
    m_process->waitForFinished(30000);
  }
}

bool StudyPanel::running() const { return m_process && m_process->state() != QProcess::NotRunning; }

bool StudyPanel::launch(const QStringList& args) {
  if (running()) {
    Q_EMIT message(tr("A search is running; stop it first"), true);
    return false;
  }
  QString cli = qEnvironmentVariable("STUDIO_CLI");
  if (cli.isEmpty()) cli = QCoreApplication::applicationDirPath() + "/training-studio-cli";
  m_process = std::make_unique<QProcess>();
  m_listedTrials.clear();
  m_process->setProcessChannelMode(QProcess::MergedChannels);
  connect(m_process.get(), &QProcess::readyRead, this, &StudyPanel::readOutput);
  connect(m_process.get(), &QProcess::finished, this, [this](int code) {
    readOutput();
    m_poll->stop();
    refresh();
    Q_EMIT message(code == 0     ? tr("search ended")
                   : code == 130 ? tr("search stopped; Resume continues it")
                                 : tr("search ended with exit status %1 (the log says why)").arg(code),
                   code != 0 && code != 130);
    updateButtons();
    Q_EMIT finished(code);
  });
  m_pending.clear();
  m_heard = m_stopAsked = false;
  m_process->start(cli, args);
  if (!m_process->waitForStarted(10000)) {
    Q_EMIT message(tr("cannot start %1: %2").arg(cli, m_process->errorString()), true);
    m_process.reset();
    return false;
  }
  m_poll->start();
  updateButtons();
  return true;
}

bool StudyPanel::start(const TrainConfig& base, const QStringList& args) {
  m_baseFile = std::make_unique<QTemporaryFile>(QDir::tempPath() + "/training-studio-search-XXXXXX.json");
  if (!m_baseFile->open()) {
    Q_EMIT message(tr("cannot write the search's settings in %1").arg(QDir::tempPath()), true);
    return false;
  }
  m_baseFile->close();
  try {
    saveConfigFile(base, m_baseFile->fileName().toStdString());
  } catch (const Error& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
    return false;
  }
  m_folder.clear();
  m_study = nlohmann::json::object();
  return launch(QStringList{"search", "--config", m_baseFile->fileName(), "--out", m_runsDir} + args);
}

void StudyPanel::askToJoin() {
  bool ok = false;
  const QString url =
      QInputDialog::getText(this, tr("Join a study"),
                            tr("The study's database (postgresql://USER@HOST/DATABASE; the password from "
                               "PGPASSWORD or ~/.pgpass):"),
                            QLineEdit::Normal, QString(), &ok);
  if (!ok || url.isEmpty()) return;
  const QString study =
      QInputDialog::getText(this, tr("Join a study"), tr("The study's name:"), QLineEdit::Normal, QString(), &ok);
  if (!ok || study.isEmpty()) return;
  const int parallel =
      QInputDialog::getInt(this, tr("Join a study"), tr("Trials at once on this machine:"), 1, 1, 64, 1, &ok);
  if (ok) join(url, study, parallel);
}

bool StudyPanel::join(const QString& url, const QString& study, int parallel) {
  m_folder.clear();
  m_study = nlohmann::json::object();
  return launch({"search", "--join", "--storage", url, "--study", study, "--parallel", QString::number(parallel),
                 "--out", m_runsDir});
}

bool StudyPanel::resume() {
  if (m_folder.isEmpty()) return false;
  return launch({"search", "--resume", m_folder});
}

void StudyPanel::stop() {
  if (!running()) return;
  m_stopAsked = true;
  m_status->setText(tr("stopping: the trials save a checkpoint…"));
  // Before its first line the search may not yet handle the signal (its
  // libraries still loading): SIGTERM would end it at once, "exit status
  // 143" and no study. It is sent when the search first speaks.
  if (m_heard) m_process->terminate();
}

void StudyPanel::readOutput() {
  if (!m_process) return;
  const QByteArray bytes = m_process->readAll();
  m_pending += bytes;
  if (!bytes.isEmpty() && !m_heard) {
    m_heard = true;  // its main() has begun: it stops with a checkpoint on SIGTERM
    if (m_stopAsked) m_process->terminate();
  }
  static const QRegularExpression studyIn("study in (.+)$");
  for (qsizetype end; (end = m_pending.indexOf('\n')) >= 0;) {
    const QString line = QString::fromUtf8(m_pending.left(end)).trimmed();
    m_pending.remove(0, end + 1);
    if (line.isEmpty()) continue;
    if (m_folder.isEmpty())
      if (const auto m = studyIn.match(line); m.hasMatch()) m_folder = m.captured(1);
    // Each evaluation of each trial is in the dock's table and plots already.
    static const QRegularExpression trial("^trial (\\d+): (\\w+)");
    const auto said = trial.match(line);
    const QString what = said.hasMatch() ? said.captured(2) : QString();
    if (what != "evaluation") Q_EMIT message(line, line.startsWith("error:"));
    // A trial's run is listed from its first evaluation (its folder is there by then) and again when it ends.
    const bool first = what == "evaluation" && m_listedTrials.insert(said.captured(1).toInt()).second;
    const auto ended = choiceNamed<TrialState>(what.toStdString());
    if (first || (ended && ended != TrialState::running && ended != TrialState::waiting)) Q_EMIT trialRunsChanged();
  }
}

void StudyPanel::openStudy(const QString& folder) {
  m_folder = folder;
  refresh();
  if (m_study.empty()) Q_EMIT message(tr("%1 holds no study.json (not a study's folder)").arg(folder), true);
  updateButtons();
}

void StudyPanel::refresh() {
  if (m_folder.isEmpty()) return;
  QFile f(m_folder + "/study.json");
  if (!f.open(QIODevice::ReadOnly)) return;
  const auto j = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
  if (!j.is_object() || !j.contains("trials") || !j["trials"].is_array()) return;
  m_study = j;
  int running = 0, stopped = 0, pruned = 0, failed = 0;
  for (const auto& t : j["trials"]) {
    const auto s = trialState(t);
    running += s == TrialState::running;
    stopped += s == TrialState::stopped;  // resumable in its folder: Resume continues it
    pruned += s == TrialState::pruned;
    failed += s == TrialState::failed;
  }
  QString s = tr("study %1: %2 of %3 trials")
                  .arg(QString::fromStdString(j.value("name", "")))
                  .arg(j["trials"].size())
                  .arg(j.value("trials_target", 0));
  if (running) s += tr(", %1 running").arg(running);
  if (stopped) s += tr(", %1 stopped (Resume continues them)").arg(stopped);
  if (pruned) s += tr(", %1 pruned").arg(pruned);
  if (failed) s += tr(", %1 failed").arg(failed);
  if (j.contains("best") && j["best"].is_object())
    s += tr("; best %1 %2 (trial %3)")
             .arg(QString::fromStdString(j.value("metric", "")))
             .arg(number(j["best"]["value"]), 0, 'f', 4)
             .arg(j["best"].value("number", -1));
  if (!j.value("parallel_note", "").empty()) s += "; " + QString::fromStdString(j.value("parallel_note", ""));
  if (choiceNamed<StudyState>(j.value("state", "")) == StudyState::stopped) s += tr(" — stopped");
  m_status->setText(s);
  fillTable();
  plotBest();
  plotParallel();
  plotImportance();
  updateButtons();
}

void StudyPanel::fillTable() {
  const std::set<int> selected = selectedTrialNumbers();
  const QSignalBlocker block(m_table);
  QStringList headers{tr("#"), tr("State"), QString::fromStdString(m_study.value("metric", "value"))};
  std::vector<std::string> keys;
  for (const auto& p : m_study["space"]) {
    keys.push_back(p.value("key", ""));
    headers << QString::fromStdString(keys.back());
  }
  m_table->clear();
  m_table->setColumnCount(headers.size());
  m_table->setHorizontalHeaderLabels(headers);
  const auto& trials = m_study["trials"];
  m_table->setRowCount(static_cast<int>(trials.size()));
  for (int r = 0; r < static_cast<int>(trials.size()); ++r) {
    const auto& t = trials[r];
    const QString state = QString::fromStdString(t.value("state", ""));
    auto* n = new QTableWidgetItem(QString::number(t.value("number", -1)));
    // A trial without a run folder yet (or of a study written by hand) has none to show: t["run_dir"] of a
    // missing key threw.
    const nlohmann::json runDir = t.value("run_dir", nlohmann::json(""));
    n->setToolTip(QString::fromStdString(runDir.is_string() ? runDir.get<std::string>() : ""));
    m_table->setItem(r, 0, n);
    auto* st = new QTableWidgetItem(state);
    if (!t.value("error", "").empty()) st->setToolTip(QString::fromStdString(t.value("error", "")));
    const auto named = trialState(t);
    if (named == TrialState::pruned || named == TrialState::failed)
      st->setForeground(QColor(named == TrialState::failed ? "#d03c2f" : "#888888"));
    m_table->setItem(r, 1, st);
    const double v = number(t.value("value", nlohmann::json()));
    m_table->setItem(r, 2, new QTableWidgetItem(std::isfinite(v) ? QString::number(v, 'f', 4) : QString()));
    for (size_t k = 0; k < keys.size(); ++k)
      m_table->setItem(r, 3 + static_cast<int>(k),
                       new QTableWidgetItem(t["params"].contains(keys[k]) ? text(t["params"][keys[k]]) : QString()));
    if (selected.count(t.value("number", -1))) m_table->selectRow(r);
  }
  // A study shared by several machines: each trial's machine, last (the
  // columns before it are the same for every study). Two runners on one
  // machine are told apart by their process (issue 60: both read "vm").
  bool shared = false;
  std::map<std::string, std::set<std::string>> runnersOn;  // machine -> its runners ("host:pid")
  for (const auto& t : trials) {
    shared = shared || !t.value("machine", "").empty();
    if (!t.value("runner", "").empty()) runnersOn[t.value("machine", "")].insert(t.value("runner", ""));
  }
  if (shared) {
    const int column = m_table->columnCount();
    m_table->setColumnCount(column + 1);
    m_table->setHorizontalHeaderItem(column, new QTableWidgetItem(tr("Machine")));
    for (int r = 0; r < static_cast<int>(trials.size()); ++r) {
      const std::string machine = trials[r].value("machine", ""), runner = trials[r].value("runner", "");
      QString shown = QString::fromStdString(machine);
      if (runnersOn[machine].size() > 1 && runner.rfind(machine + ":", 0) == 0)
        shown = tr("%1 (process %2)").arg(shown, QString::fromStdString(runner.substr(machine.size() + 1)));
      m_table->setItem(r, column, new QTableWidgetItem(shown));
    }
  }
  m_table->resizeColumnsToContents();
}

QStringList StudyPanel::selectedRunDirs() const {
  QStringList dirs;
  std::set<int> rows;
  for (const auto* item : m_table->selectedItems()) rows.insert(item->row());
  const auto& trials = m_study.value("trials", nlohmann::json::array());
  for (int r : rows)
    if (r < static_cast<int>(trials.size()) && trials[r].value("run_dir", nlohmann::json()).is_string())
      dirs << QString::fromStdString(trials[r]["run_dir"].get<std::string>());
  return dirs;
}

bool StudyPanel::bestSettings(TrainConfig& config, QString* why) const {
  auto say = [why](const QString& s) {
    if (why) *why = s;
    return false;
  };
  if (!m_study.contains("best") || !m_study["best"].is_object()) return say(tr("no trial has finished yet"));
  QFile f(m_folder + "/search.json");
  if (!f.open(QIODevice::ReadOnly)) return say(tr("%1/search.json cannot be read").arg(m_folder));
  try {
    const SearchSpec spec =
        searchSpecFromJson(nlohmann::json::parse(f.readAll().toStdString()), (m_folder + "/search.json").toStdString());
    TrainConfig c = spec.base;
    for (const auto& [key, value] : m_study["best"]["params"].items()) applyOverride(c, assignment(key, value));
    c.name = spec.name + "-best";
    config = c;
    return true;
  } catch (const std::exception& e) {
    return say(QString::fromStdString(e.what()));
  }
}

void StudyPanel::updateButtons() {
  const bool run = running();
  m_search->setEnabled(!run);
  m_open->setEnabled(!run);
  m_stop->setEnabled(run);
  // A study stopped, or one whose runner was stopped before it wrote study.json (its search.json is there).
  const bool unstarted = m_study.empty() && !m_folder.isEmpty() && QFile::exists(m_folder + "/search.json");
  m_resume->setEnabled(!run && !m_folder.isEmpty() &&
                       (choiceNamed<StudyState>(m_study.value("state", "")) == StudyState::stopped || unstarted));
  m_trainBest->setEnabled(!run && m_study.contains("best") && m_study["best"].is_object());
}

}  // namespace studio::ui
