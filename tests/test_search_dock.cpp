// The Search dock and dialog (ui/search/study_panel.h, ui/search/search_dialog.h), driven
// offscreen as a person would: the dialog checks the space as it is typed
// (a reversed range and a metric the runs do not record are listed, OK waits
// for them; a setting the schedule overrides is said); a search of the
// form's settings started from the window fills the trials table, the
// best-so-far curve, the parallel coordinates and the importances as it
// runs; selecting trials selects their runs; brushing an axis selects the
// trials in its span; Train best puts the best trial's values in the form
// and trains them; Stop ends the search with its trials resumable, and
// Resume finishes it. The search itself is the CLI's (tests/test_search.py).
#include <QtTest/QtTest>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>

#include <fstream>
#include <set>
#include <vector>

#include <signal.h>
#include <sys/types.h>

#include "qcustomplot.h"
#include "studio/errors.h"
#include "studio/search_space.h"
#include "studio/settings_schema.h"
#include "test_support.h"
#include "ui/runs/runs_panel.h"
#include "ui/search/search_dialog.h"
#include "ui/search/study_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "window_suite.h"

using namespace studio;

namespace {
constexpr int kTimeout = test::kHangLimitMs;

TrainConfig trialBase(const QString& out) {
  TrainConfig c = test::smallConfig(out);
  c.evaluation.every_steps = 4;
  c.schedule.kind = ScheduleKind::cosine;
  return c;
}

// The pids whose command line holds --set name=NAME (a trial's training
// process), as test_search_shared's processes_named finds them.
std::vector<pid_t> processesNamed(const QString& name) {
  std::vector<pid_t> found;
  const QByteArray needle = ("name=" + name).toUtf8() + '\0';
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool number = false;
    const int pid = entry.toInt(&number);
    QFile cmdline("/proc/" + entry + "/cmdline");
    if (number && cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(needle))
      found.push_back(static_cast<pid_t>(pid));
  }
  return found;
}
}  // namespace

class TestSearchDock : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  // The dialog offers exactly the settings the CLI's --space takes: every
  // number, choice and switch (train.seed too), no name, path, size or list.
  void theDialogOffersWhatTheCliSearches() {
    ui::SearchDialog dialog(trialBase(m_dir.path()));
    const auto* pick = dialog.findChild<QComboBox*>("searchSetting");
    QVERIFY(pick);
    QStringList offered;
    for (int i = 0; i < pick->count(); ++i) offered << pick->itemText(i);
    QVERIFY(offered.contains("train.seed"));
    QVERIFY(!offered.contains("name") && !offered.contains("data.image_size"));
    for (const FieldSpec& f : settingsSchema()) {
      const std::string kind =
          f.type == FieldType::Real ? "float:0.1:1" : (f.type == FieldType::Int ? "int:1:2" : "choice:a,b");
      bool takes = true;
      try {
        parseSearchParam(f.path + "=" + kind);
      } catch (const ConfigFileError&) {
        takes = false;
      }
      QVERIFY2(takes == offered.contains(QString::fromStdString(f.path)), f.path.c_str());
    }
  }

  void theDialogChecksAsItIsTyped() {
    TrainConfig c = trialBase(m_dir.path());
    ui::SearchDialog dialog(c);
    // The first row is the rate that acts, around the form's value.
    QCOMPARE(dialog.table()->rowCount(), 1);
    QCOMPARE(dialog.table()->item(0, 0)->text(), QString("optimizer.lr"));
    QCOMPARE(dialog.table()->item(0, 1)->text(), QString("float:0.005:0.5:log"));
    QVERIFY2(dialog.problems().isEmpty(), qPrintable(dialog.problems()));
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    dialog.resize(dialog.minimumSizeHint());  // as small as it goes, as on a 720-px screen
    QApplication::processEvents();
    QPushButton* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    const QPoint okWithout = ok->mapTo(&dialog, QPoint(0, 0));
    const QSize sizeWithout = dialog.size();
    QVERIFY(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    dialog.table()->item(0, 1)->setText("float:0.5:0.005");
    QVERIFY(dialog.problems().contains("the low bound 0.5 is not below the high bound 0.005"));
    QVERIFY(!dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    QVERIFY(dialog.findChild<QLabel*>("searchProblems")->isVisibleTo(&dialog));
    // The problem takes its place without moving OK under the mouse (issue 60: the dialog re-laid out).
    QApplication::processEvents();
    QApplication::processEvents();
    QCOMPARE(dialog.size(), sizeWithout);
    QCOMPARE(ok->mapTo(&dialog, QPoint(0, 0)), okWithout);
    dialog.table()->item(0, 1)->setText("float:0.005:0.5:log");
    dialog.metricBox()->setCurrentText("ema_eval_accuracy");
    QVERIFY(dialog.problems().contains("set train.ema.decay"));
    dialog.metricBox()->setCurrentText("eval_loss");
    QVERIFY(dialog.problems().isEmpty());
    dialog.addParam("model.width");
    QCOMPARE(dialog.table()->item(1, 1)->text(), QString("int:2:8"));
    dialog.addParam("optimizer.kind");
    QCOMPARE(dialog.table()->item(2, 1)->text(), QString("choice:sgd,adam,adamw"));
    dialog.addParam("train.batch_size");
    QCOMPARE(dialog.table()->item(3, 1)->text(), QString("int:16:64:pow2"));
    dialog.trials()->setValue(7);
    dialog.trialSettings()->setPlainText("train.epochs=1\n");
    const QStringList args = dialog.cliArguments();
    for (const QString& a : {QString("optimizer.lr=float:0.005:0.5:log"), QString("model.width=int:2:8"),
                             QString("train.batch_size=int:16:64:pow2"), QString("eval_loss"), QString("minimize"),
                             QString("train.epochs=1")})
      QVERIFY2(args.contains(a), qPrintable(args.join(' ')));
    QCOMPARE(args[args.indexOf("--trials") + 1], QString("7"));
    // Under OneCycle the rate that acts is the cycle's peak; optimizer.lr is said to have no effect.
    c.schedule.kind = ScheduleKind::onecycle;
    ui::SearchDialog cycle(c);
    QCOMPARE(cycle.table()->item(0, 0)->text(), QString("schedule.onecycle.max_lr"));
    cycle.addParam("optimizer.lr");
    QVERIFY2(cycle.warnings().contains("--space optimizer.lr has no effect under schedule.kind onecycle"),
             qPrintable(cycle.warnings()));
    QVERIFY(cycle.findChild<QLabel*>("searchWarnings")->isVisibleTo(&cycle));
  }

  void aSearchFromTheWindowFillsTheDockAndTrainsTheBest() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    const QString out = m_dir.path() + "/runs";
    window.settingsPanel()->applyDocument(toJson(trialBase(out)));
    QCOMPARE(window.runsPanel()->runsDir(), out);
    ui::StudyPanel* dock = window.studyPanel();
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    // The Runs list follows the trials as they run (issue 60: it stayed as it
    // was until the search ended): connected after the window's own refresh,
    // this sees the list as the window left it.
    std::vector<int> listed;
    connect(dock, &ui::StudyPanel::trialRunsChanged, this, [&] { listed.push_back(window.runsPanel()->runCount()); });
    ui::SearchDialog dialog(window.settingsPanel()->config());
    dialog.addParam("model.width", "int:2:8");
    dialog.trials()->setValue(4);
    dialog.parallel()->setValue(2);
    dialog.pruner()->setCurrentText("none");
    dialog.name()->setText("dock");
    QVERIFY(window.startSearch(dialog.cliArguments()));
    QVERIFY(dock->running());
    // It fills in as it runs: a trial is listed before the search ends.
    QTRY_VERIFY_WITH_TIMEOUT(dock->trials()->rowCount() > 0 || !ended.isEmpty(), kTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    QCOMPARE(ended.first().first().toInt(), 0);
    QVERIFY2(listed.size() >= 8 && listed.front() >= 1 && listed.back() == 4,  // a first evaluation and an end each
             qPrintable(QString("the Runs list read %1 times").arg(listed.size())));
    QCOMPARE(dock->studyFolder(), out + "/search-dock");
    const nlohmann::json study = dock->study();
    QCOMPARE(study["state"].get<std::string>(), std::string("done"));
    QCOMPARE(dock->trials()->rowCount(), 4);
    for (int r = 0; r < 4; ++r) QCOMPARE(dock->trials()->item(r, 1)->text(), QString("completed"));
    QCOMPARE(dock->bestPlot()->graph(0)->dataCount(), 4);
    // Every trial's dot lies inside the axes, none cut in half by an edge (issue 40, item 9).
    const QCPRange shownValues = dock->bestPlot()->yAxis->range();
    for (auto it = dock->bestPlot()->graph(0)->data()->constBegin();
         it != dock->bestPlot()->graph(0)->data()->constEnd(); ++it)
      QVERIFY2(it->value > shownValues.lower && it->value < shownValues.upper,
               qPrintable(QString("%1 in %2..%3").arg(it->value).arg(shownValues.lower).arg(shownValues.upper)));
    QCOMPARE(dock->parallelPlot()->graphCount(), 4);
    auto* bars = qobject_cast<QCPBars*>(dock->importancePlot()->plottable(0));
    QVERIFY(bars);
    QCOMPARE(bars->dataCount(), 2);
    QVERIFY(dock->status()->text().contains("4 of 4 trials"));
    test::screenshotAt720(window, nullptr, "search-dock");
    // Selecting two trials selects their runs.
    dock->trials()->selectRow(0);
    dock->trials()->selectionModel()->select(dock->trials()->model()->index(2, 0),
                                             QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QStringList want{QString::fromStdString(study["trials"][0]["run_dir"].get<std::string>()),
                     QString::fromStdString(study["trials"][2]["run_dir"].get<std::string>())};
    QStringList got = window.runsPanel()->selectedRuns();
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    QCOMPARE(got, want);
    // Brushing the metric's axis: the trials in the upper half of its span.
    const int metricAxis = 2;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& t : study["trials"])
      lo = std::min(lo, t["value"].get<double>()), hi = std::max(hi, t["value"].get<double>());
    std::set<QString> upper;
    for (const auto& t : study["trials"])
      if (hi == lo || (t["value"].get<double>() - lo) / (hi - lo) >= 0.5)
        upper.insert(QString::fromStdString(t["run_dir"].get<std::string>()));
    dock->brush(metricAxis, 0.5, 1.0);
    const QStringList brushed = dock->selectedRunDirs();
    QCOMPARE(std::set<QString>(brushed.begin(), brushed.end()), upper);
    // Train best: the best trial's values in the form, trained as a run.
    QSignalSpy runEnded(&window, &ui::MainWindow::runFinished);
    const std::string formName = window.settingsPanel()->config().name;
    QVERIFY(window.trainBestOfStudy());
    QCOMPARE(window.settingsPanel()->config().optimizer.lr, study["best"]["params"]["optimizer.lr"].get<double>());
    QCOMPARE(window.settingsPanel()->config().model.width, study["best"]["params"]["model.width"].get<int>());
    // The run is named for the study; the form keeps its own name, so later runs are not "dock-best" too.
    QTRY_COMPARE_WITH_TIMEOUT(runEnded.size(), 1, kTimeout);
    const QString bestRun = window.controller()->runDir();
    QCOMPARE(loadConfigFile((bestRun + "/settings.json").toStdString()).name, std::string("dock-best"));
    QCOMPARE(window.settingsPanel()->config().name, formName);
    QVERIFY(formName != "dock-best");
  }

  void aPrunedTrialIsMarkedInTheRunsList() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    const QString out = m_dir.path() + "/pruned";
    TrainConfig c = trialBase(out);
    c.model.kind = "mlp";
    c.data.train_limit = 2048;
    c.train.epochs = 4;
    c.evaluation.every_steps = 8;
    c.schedule.kind = ScheduleKind::constant;
    window.settingsPanel()->applyDocument(toJson(c));
    ui::StudyPanel* dock = window.studyPanel();
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    // A rate far too low trails the first trial at its first evaluation. The
    // second trial is long (400 epochs), so that the pruner's stop reaches it
    // before its end however fast it trains: a run that ends by itself
    // before the stop arrives is completed (test_search's last-evaluation
    // case), and a 4-epoch one did on a fast disk.
    QVERIFY(window.startSearch({"--space", "optimizer.lr=choice:0.003,0.000001", "--space", "train.epochs=choice:4,400",
                                "--enqueue", "optimizer.lr=0.003 train.epochs=4", "--enqueue",
                                "optimizer.lr=0.000001 train.epochs=400", "--trials", "2", "--pruner", "median",
                                "--name", "pruned"}));
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    QCOMPARE(dock->trials()->item(1, 1)->text(), QString("pruned"));
    const QString run = QString::fromStdString(dock->study()["trials"][1]["run_dir"].get<std::string>());
    window.runsPanel()->refresh();
    QCOMPARE(window.runsPanel()->cellText(run, "Status"), QString("pruned"));
    QCOMPARE(window.runsPanel()->cellText(
                 QString::fromStdString(dock->study()["trials"][0]["run_dir"].get<std::string>()), "Status"),
             QString("completed"));
  }

  void stopKeepsTheTrialsAndResumeFinishesThem() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    const QString out = m_dir.path() + "/stop";
    TrainConfig c = trialBase(out);
    c.data.train_limit = 8192;
    // Long enough to be stopped in the middle: 1,024 steps (the stop comes
    // at the first evaluation, step 32, with about 4 s of steps left here),
    // 512 under the sanitizers, whose steps are slower (two trials of 1,536
    // took 390 s).
    c.train.epochs = test::kSanitizerSlowdown > 1 ? 2 : 4;
    c.evaluation.every_steps = 32;
    window.settingsPanel()->applyDocument(toJson(c));
    ui::StudyPanel* dock = window.studyPanel();
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    QVERIFY(window.startSearch(
        {"--space", "optimizer.lr=float:0.01:0.1:log", "--trials", "2", "--pruner", "none", "--name", "stop"}));
    // Stopped while its first trial trains.
    QTRY_VERIFY_WITH_TIMEOUT(dock->trials()->rowCount() > 0 && !dock->study()["trials"][0]["intermediate"].empty(),
                             kTimeout);
    dock->stop();
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    QCOMPARE(ended.first().first().toInt(), 130);
    QCOMPARE(dock->study()["state"].get<std::string>(), std::string("stopped"));
    QCOMPARE(dock->trials()->item(0, 1)->text(), QString("stopped"));  // in its middle: resumable, not failed
    QVERIFY2(dock->status()->text().contains("1 stopped (Resume continues them)"), qPrintable(dock->status()->text()));
    QVERIFY(dock->status()->text().contains("stopped"));
    const std::string run = dock->study()["trials"][0]["run_dir"].get<std::string>();
    QCOMPARE(nlohmann::json::parse(test::readText(run + "/summary.json"))["status"].get<std::string>(),
             std::string("stopped"));
    QVERIFY(dock->resume());
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, kTimeout);
    QCOMPARE(ended.last().first().toInt(), 0);
    QCOMPARE(dock->trials()->rowCount(), 2);
    QCOMPARE(dock->study()["trials"][0]["run_dir"].get<std::string>(), run);  // resumed in its folder
    for (int r = 0; r < 2; ++r) QCOMPARE(dock->trials()->item(r, 1)->text(), QString("completed"));
    // The resumed sampler draws on; it does not repeat the first trial's value.
    QVERIFY(dock->study()["trials"][0]["params"] != dock->study()["trials"][1]["params"]);
  }

  // Stop pressed before the search's process has begun its main() (its
  // libraries still loading, seconds under ASan): SIGTERM then ended it
  // with exit status 143 and no study. The dock now signals it when it
  // first speaks, and it stops as asked.
  void stopBeforeTheSearchSpeaksStopsIt() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig c = trialBase(m_dir.path() + "/stop-first");
    window.settingsPanel()->applyDocument(toJson(c));
    ui::StudyPanel* dock = window.studyPanel();
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    QVERIFY(window.startSearch(
        {"--space", "optimizer.lr=float:0.01:0.1:log", "--trials", "1", "--pruner", "none", "--name", "first"}));
    dock->stop();  // at once: the process has just been started
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    QCOMPARE(ended.first().first().toInt(), 130);
    QVERIFY(!dock->studyFolder().isEmpty());
  }

  // Issue 40, item 3: Stop pressed at once, while the first trial's process
  // starts (a SIGINT before it could handle one ended it with "exit status
  // -2", recorded failed and never trained again): nothing is failed, and
  // Resume trains every trial asked for.
  void stopAtOnceLosesNoTrial() {
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    TrainConfig c = trialBase(m_dir.path() + "/stop-at-once");
    window.settingsPanel()->applyDocument(toJson(c));
    ui::StudyPanel* dock = window.studyPanel();
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    QVERIFY(window.startSearch(
        {"--space", "optimizer.lr=float:0.01:0.1:log", "--trials", "2", "--pruner", "none", "--name", "at-once"}));
    QTest::qWait(1500);  // the runner has asked its first trial, whose process is loading
    dock->stop();
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    QVERIFY2(dock->study().contains("trials"), dock->study().dump().c_str());  // the study was written
    for (const auto& t : dock->study()["trials"]) QVERIFY2(t["state"] != "failed", t.dump().c_str());
    QVERIFY(dock->resume());
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, kTimeout);
    QCOMPARE(ended.last().first().toInt(), 0);
    QCOMPARE(dock->trials()->rowCount(), 2);
    for (int r = 0; r < 2; ++r) QCOMPARE(dock->trials()->item(r, 1)->text(), QString("completed"));
  }

  // Issue 46: Run > Join a study… runs this machine's runner on a study in
  // PostgreSQL (a server started for the test) that another runner began;
  // the dock lists every trial of the study with the machine that trained it.
  void joinFollowsAStudyInADatabase() {
    const QString helper = test::env("STUDIO_TEST_SCRIPTS") + "/postgres_server.py";
    QProcess start;
    start.start(test::env("STUDIO_PYTHON"), {helper, "start"});
    QVERIFY(start.waitForFinished(test::kHangLimitMs));
    const QStringList said = QString::fromUtf8(start.readAllStandardOutput()).split(' ', Qt::SkipEmptyParts);
    QVERIFY2(start.exitCode() == 0 && said.size() == 3, start.readAllStandardError().constData());
    const QString server = said[2].trimmed();
    const QString url = "postgresql://studio@127.0.0.1:" + said[0].trimmed() + "/study";
    qputenv("PGPASSWORD", said[1].trimmed().toUtf8());
    // Machine A: a study of 4 trials of a few seconds each, begun outside the window.
    QProcess first;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("STUDIO_MACHINE", "machine-a");
    first.setProcessEnvironment(env);
    first.setProcessChannelMode(QProcess::MergedChannels);
    const QString base = m_dir.path() + "/joined-base.json";
    saveConfigFile(trialBase(m_dir.path() + "/machine-a"), base.toStdString());
    first.start(test::env("STUDIO_CLI"), {"search", "--config", base, "--set", "train.epochs=3", "--space",
                                          "optimizer.lr=float:0.01:0.1:log", "--trials", "4", "--pruner", "none",
                                          "--storage", url, "--name", "joined", "--out", m_dir.path() + "/machine-a"});
    QByteArray heard;
    QTRY_VERIFY_WITH_TIMEOUT(
        (heard += first.readAll()).contains("trial 0: started") || first.state() == QProcess::NotRunning, kTimeout);
    QVERIFY2(first.state() == QProcess::Running, heard.constData());
    // Both machines train trials, by events rather than by how fast each
    // starts (as test_search_shared): A's trial 0 is held (SIGSTOP; its runner
    // keeps its heartbeat) until B has started one. With two CPU hogs beside
    // the suites, A once trained all four before B's runner had started.
    std::vector<pid_t> held;
    QTRY_VERIFY_WITH_TIMEOUT(!(held = processesNamed("joined-t0")).empty(), kTimeout);
    for (const pid_t pid : held) ::kill(pid, SIGSTOP);
    struct Resume {
      std::vector<pid_t>& pids;
      ~Resume() {
        for (const pid_t pid : pids) ::kill(pid, SIGCONT);
      }
    } resume{held};
    // Machine B: the window.
    ui::MainWindow window(test::env("STUDIO_PRESET_DIR"), /*restore=*/false);
    ui::StudyPanel* dock = window.studyPanel();
    dock->setRunsDir(m_dir.path() + "/machine-b");
    QSignalSpy ended(dock, &ui::StudyPanel::finished);
    qputenv("STUDIO_MACHINE", "machine-b");
    QVERIFY(dock->join(url, "joined", 1));
    const auto bStarted = [&] {
      for (const auto& trial : dock->study().value("trials", nlohmann::json::array()))
        if (trial.value("machine", "") == "machine-b") return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(bStarted() || !ended.isEmpty(), kTimeout);
    for (const pid_t pid : held) ::kill(pid, SIGCONT);
    held.clear();
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, kTimeout);
    qunsetenv("STUDIO_MACHINE");
    QVERIFY(first.state() == QProcess::NotRunning || first.waitForFinished(kTimeout));  // false when ended already
    QCOMPARE(first.exitCode(), 0);
    QCOMPARE(ended.first().first().toInt(), 0);
    dock->refresh();
    QTableWidget* t = dock->trials();
    QCOMPARE(t->rowCount(), 4);
    const int machine = t->columnCount() - 1;
    QCOMPARE(t->horizontalHeaderItem(machine)->text(), QString("Machine"));
    std::set<QString> machines;
    for (int r = 0; r < 4; ++r) {
      QCOMPARE(t->item(r, 1)->text(), QString("completed"));
      machines.insert(t->item(r, machine)->text());
    }
    QVERIFY2(machines == (std::set<QString>{"machine-a", "machine-b"}), qPrintable(QString::number(machines.size())));
    // Each trial also records its runner, machine and process ("machine-a:1234").
    for (const auto& trial : dock->study()["trials"])
      QVERIFY2(QString::fromStdString(trial.value("runner", ""))
                   .startsWith(QString::fromStdString(trial.value("machine", "")) + ":"),
               trial.dump().c_str());
    QProcess::execute(test::env("STUDIO_PYTHON"), {helper, "stop", server});
  }

  // Issue 60: two runners on one machine both read "vm" in the Machine
  // column; trials of two processes on one machine are told apart by their
  // process, and a machine with one runner keeps its name alone.
  void twoRunnersOnOneMachineAreToldApart() {
    const QString folder = m_dir.path() + "/search-one-host";
    QDir().mkpath(folder);
    nlohmann::json study = {{"name", "one-host"},
                            {"metric", "eval_accuracy"},
                            {"direction", "maximize"},
                            {"trials_target", 3},
                            {"trials", nlohmann::json::array()}};
    const std::vector<std::pair<std::string, std::string>> ran{{"vm", "vm:101"}, {"vm", "vm:202"}, {"gpu", "gpu:7"}};
    for (size_t i = 0; i < ran.size(); ++i)
      study["trials"].push_back({{"number", i},
                                 {"state", "completed"},
                                 {"value", 0.5},
                                 {"params", nlohmann::json::object()},
                                 {"machine", ran[i].first},
                                 {"runner", ran[i].second}});
    std::ofstream((folder + "/study.json").toStdString()) << study.dump();
    ui::StudyPanel panel;
    panel.openStudy(folder);  // its trials have no run_dir: that threw
    QTableWidget* t = panel.trials();
    QCOMPARE(t->rowCount(), 3);
    const int machine = t->columnCount() - 1;
    QCOMPARE(t->item(0, machine)->text(), QString("vm (process 101)"));
    QCOMPARE(t->item(1, machine)->text(), QString("vm (process 202)"));
    QCOMPARE(t->item(2, machine)->text(), QString("gpu"));
    // One finished trial is drawn on its own scale (issue 60: a +-2e7 axis),
    // also after a study of a wider range was shown.
    study["trials"][0]["value"] = -3.0e7;
    std::ofstream((folder + "/study.json").toStdString()) << study.dump();
    panel.refresh();
    QVERIFY(panel.bestPlot()->yAxis->range().size() > 3.0e7);
    study["trials"] = nlohmann::json::array({study["trials"][2]});
    std::ofstream((folder + "/study.json").toStdString()) << study.dump();
    panel.refresh();
    const QCPRange shown = panel.bestPlot()->yAxis->range();
    QVERIFY2(shown.contains(0.5) && shown.size() < 0.1,
             qPrintable(QString("%1 .. %2").arg(shown.lower).arg(shown.upper)));
  }
};

QTEST_MAIN(TestSearchDock)
#include "test_search_dock.moc"
