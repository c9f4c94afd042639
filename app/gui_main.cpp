// training-studio: the window. Opens on a preset (or a settings file), ready
// to press Start; --autostart, --quit-after-steps and --screenshot run it
// unattended (the README's screenshot, the tests).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>

#include "studio/log.h"
#include "studio/run_layout.h"
#include "studio/session.h"
#include "studio/train_config.h"
#include "ui/charts/plots_panel.h"
#include "ui/common/theme.h"
#include "ui/runs/runs_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"

namespace {

int fail(const QString& text, int code) {
  std::fprintf(stderr, "training-studio: %s\n", qPrintable(text));
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("TrainingStudio");
  QApplication::setApplicationName("training-studio");
  QApplication::setApplicationVersion("0.1.0");
  QApplication::setApplicationDisplayName("Training Studio");

  QCommandLineParser cli;
  cli.setApplicationDescription("Training Studio: train PyTorch models and watch them learn.");
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption preset("preset", "Open on the preset NAME (default: fashion-mnist-cnn).", "NAME");
  QCommandLineOption config("config", "Open on the settings in FILE (JSON).", "FILE");
  QCommandLineOption set("set", "Change one setting, e.g. optimizer.lr=0.05 (repeatable).", "KEY=VALUE");
  QCommandLineOption autostart("autostart", "Start the run at once.");
  QCommandLineOption quitAfter("quit-after-steps", "Stop the run (with a checkpoint) after N steps and quit.", "N");
  QCommandLineOption screenshot("screenshot", "Before quitting, save the window as a PNG to FILE.", "FILE");
  QCommandLineOption size("size", "Window size WIDTHxHEIGHT (default 1600x1000 for screenshots).", "WxH");
  QCommandLineOption theme("theme", "light, dark or system.", "NAME");
  QCommandLineOption tab("tab", "Open on this tab: curves, data, model, evaluation, predict or audit.", "NAME");
  QCommandLineOption compare(
      "compare", "Select this run folder in the Runs list (repeatable: the runs are overlaid and compared).", "DIR");
  for (const auto& o : {preset, config, set, autostart, quitAfter, screenshot, size, theme, tab, compare})
    cli.addOption(o);
  cli.process(app);

  const bool unattended = cli.isSet(quitAfter) || cli.isSet(screenshot);
  const bool openOnGiven = cli.isSet(preset) || cli.isSet(config) || cli.isSet(set);
  const QString presetDir = QString::fromStdString(studio::defaultPresetDir());
  studio::ui::MainWindow window(presetDir, !unattended);
  studio::ui::SettingsPanel* settings = window.settingsPanel();

  if (openOnGiven || unattended) {
    // --set alone changes the remembered settings; an unattended window
    // (a screenshot, --quit-after-steps) opens on the default preset.
    const QString presetName = cli.isSet(preset)                  ? cli.value(preset)
                               : unattended && !cli.isSet(config) ? QString("fashion-mnist-cnn")
                                                                  : QString();
    QString why;
    if (!window.openWith(presetName, cli.isSet(config) ? cli.value(config) : QString(), cli.values(set), &why))
      return fail(why, 2);
  }
  if (cli.isSet(theme)) {
    const QString t = cli.value(theme);
    if (t != "light" && t != "dark" && t != "system")
      return fail("--theme must be light, dark or system (got " + t + ")", 2);
    studio::ui::applyTheme(studio::ui::themeFromName(t));
  }

  if (cli.isSet(tab)) {
    const QStringList tabs = {"curves", "data", "model", "evaluation", "predict", "audit"};
    const int i = tabs.indexOf(cli.value(tab));
    if (i < 0)
      return fail("--tab must be curves, data, model, evaluation, predict or audit (got " + cli.value(tab) + ")", 2);
    window.tabs()->setCurrentIndex(i);
  }

  int64_t stopAt = 0;
  if (cli.isSet(quitAfter)) {
    bool ok = false;
    stopAt = cli.value(quitAfter).toLongLong(&ok);
    if (!ok || stopAt <= 0)
      return fail("--quit-after-steps must be a whole number > 0 (got " + cli.value(quitAfter) + ")", 2);
    window.setStopAtStep(stopAt);
  }
  if (cli.isSet(size) || unattended) {
    const QStringList wh = (cli.isSet(size) ? cli.value(size) : QString("1600x1000")).split('x');
    const int w = wh.size() == 2 ? wh[0].toInt() : 0, h = wh.size() == 2 ? wh[1].toInt() : 0;
    if (w < 320 || h < 240)
      return fail("--size must be WIDTHxHEIGHT, at least 320x240 (got " + cli.value(size) + ")", 2);
    window.resize(w, h);
  }
  window.show();

  if (cli.isSet(compare)) {
    if (cli.isSet(autostart) || cli.isSet(quitAfter))
      return fail("--compare shows runs on disk; it cannot start one", 2);
    QStringList dirs;
    for (const QString& dir : cli.values(compare)) {
      if (!QFileInfo::exists(dir + "/" + studio::run_files::kSettings))
        return fail("--compare " + dir + ": not a run folder (no settings.json)", 2);
      dirs << QDir(dir).absolutePath();
    }
    // The runs list shows the folder the runs are in.
    window.runsPanel()->setRunsDir(QFileInfo(dirs.front()).absolutePath());
    window.runsPanel()->selectRuns(dirs);
  }

  const QString shotPath = cli.value(screenshot);
  auto takeScreenshot = [&]() -> bool {
    if (shotPath.isEmpty()) return true;
    QDir().mkpath(QFileInfo(shotPath).absolutePath());
    QApplication::processEvents();
    window.plotsPanel()->refresh();
    QApplication::processEvents();
    if (!window.grab().save(shotPath)) {
      fail("cannot write the screenshot to " + shotPath, 1);
      return false;
    }
    std::printf("screenshot: %s\n", qPrintable(QFileInfo(shotPath).absoluteFilePath()));
    return true;
  };

  int exitCode = 0;
  if (cli.isSet(autostart) || cli.isSet(quitAfter)) {
    // Unattended, nobody answers a dialog: as the CLI, say that the model's
    // code runs (the person named it on the command line) and go on.
    window.setTrustPrompt([](const QString& path, const QString& sha) {
      std::fprintf(stderr, "note: model.path %s is TorchScript: loading it runs the code in it (SHA-256 %s)\n",
                   qPrintable(path), qPrintable(sha));
      return true;
    });
    if (!settings->isValid()) return fail("the settings have errors:\n  " + settings->errorTexts().join("\n  "), 2);
    QObject::connect(&window, &studio::ui::MainWindow::runFinished, &app, [&](const studio::RunSummary& s) {
      std::printf("run %s: %lld of %lld steps, %s\n", studio::statusName(s.status).c_str(),
                  static_cast<long long>(s.steps), static_cast<long long>(s.totalSteps), s.runDir.c_str());
      if (s.status == studio::RunStatus::failed) {
        std::fprintf(stderr, "training-studio: %s\n", s.error.c_str());
        exitCode = s.badInput ? 2 : 1;
      }
      if (!cli.isSet(quitAfter)) return;
      QTimer::singleShot(100, &app, [&] {
        if (!takeScreenshot()) exitCode = 1;
        window.close();
        app.exit(exitCode);
      });
    });
    QTimer::singleShot(0, &window, [&] {
      if (!window.startRun()) {
        fail(window.lastMessage(), 2);
        app.exit(2);
      }
    });
  } else if (!shotPath.isEmpty()) {
    QTimer::singleShot(300, &app, [&] {
      exitCode = takeScreenshot() ? 0 : 1;
      window.close();
      app.exit(exitCode);
    });
  }
  const int rc = app.exec();
  return rc != 0 ? rc : exitCode;
}
