// training-studio-cli: the engine without a window.
//   train (--preset NAME | --config FILE) [--set key=value ...] [--out DIR]
//   resume RUN_DIR
//   presets
//   export RUN_DIR --out DIR [--which best|last]
// Exit status: 0 success, 2 invalid settings or input files, 1 other failures.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <thread>

#include "cli_progress.h"
#include "studio/log.h"
#include "studio/session.h"
#include "studio/train_config.h"

namespace {

std::atomic<int> g_interrupts{0};
void onInterrupt(int) { g_interrupts.fetch_add(1); }

int runSession(studio::Session& session) {
  studio::CliProgress progress(stdout);
  int seenInterrupts = 0;
  for (;;) {
    const bool done = session.wait(std::chrono::milliseconds(100));
    studio::MetricRecord r;
    while (session.pollMetric(r)) progress.record(r);
    if (done) break;
    const int interrupts = g_interrupts.load();
    if (interrupts != seenInterrupts) {
      seenInterrupts = interrupts;
      if (interrupts == 1) {
        std::fprintf(stderr, "\ninterrupted: stopping after this step and saving a checkpoint "
                             "(press Ctrl-C again to quit at once)\n");
        session.stop();
      } else {
        std::_Exit(130);
      }
    }
    progress.update(session.progress());
  }
  const studio::RunSummary s = session.summary();
  progress.finish(s);
  if (s.status == "failed") return s.badInput ? 2 : 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training Studio, headless: train PyTorch models with LibTorch"};
  app.require_subcommand(1);

  std::string preset, configFile, outDir;
  std::vector<std::string> overrides;
  auto* train = app.add_subcommand("train", "Start a new run");
  auto* presetOpt = train->add_option("--preset", preset, "Preset name (see `presets`)");
  auto* configOpt = train->add_option("--config", configFile, "Settings JSON file");
  presetOpt->excludes(configOpt);
  train->add_option("--set", overrides, "Override a setting: dotted.key=value (repeatable)");
  train->add_option("--out", outDir, "Folder for run folders (output.dir)");

  std::string runDir;
  auto* resume = app.add_subcommand("resume", "Continue a stopped run from its last checkpoint");
  resume->add_option("run_dir", runDir, "The run folder")->required();

  app.add_subcommand("presets", "List the presets");

  std::string exportRun, exportOut, which = "best";
  auto* exp = app.add_subcommand("export", "Write a run's model.pt, checkpoint and settings to a folder");
  exp->add_option("run_dir", exportRun, "The run folder")->required();
  exp->add_option("--out", exportOut, "Destination folder")->required();
  exp->add_option("--which", which, "best or last checkpoint")->check(CLI::IsMember({"best", "last"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  studio::log::setConsoleLevel("warn");

  try {
    if (app.got_subcommand("presets")) {
      const std::string dir = studio::defaultPresetDir();
      for (const auto& name : studio::presetNames(dir)) std::printf("%s\n", name.c_str());
      return 0;
    }
    if (app.got_subcommand("export")) {
      const studio::ExportResult r = studio::exportRun(exportRun, exportOut, which);
      if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
      std::printf("exported %s (%s checkpoint) to %s:", exportRun.c_str(), r.checkpoint.c_str(), exportOut.c_str());
      for (const auto& f : r.files) std::printf(" %s", std::filesystem::path(f).filename().c_str());
      std::printf("\n");
      return 0;
    }
    studio::Session session;
    if (app.got_subcommand("resume")) {
      session.resume(runDir);
      return runSession(session);
    }
    studio::TrainConfig config;
    if (!configFile.empty()) {
      config = studio::loadConfigFile(configFile);
    } else {
      const std::string name = preset.empty() ? "fashion-mnist-cnn" : preset;
      config = studio::loadConfigFile(studio::presetPath(studio::defaultPresetDir(), name));
    }
    for (const auto& o : overrides) studio::applyOverride(config, o);
    if (!outDir.empty()) config.output.dir = outDir;
    session.start(config);
    return runSession(session);
  } catch (const studio::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
