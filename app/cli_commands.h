#pragma once
// The CLI's commands, each a unit that adds its subcommands and options to
// the app and runs them when chosen (predict, search and audit have their
// own headers):
//   TrainCommands   train, resume, continue, fork        (cli_train.cpp)
//   ProbeCommands   lr-find, batch-find                  (cli_probes.cpp)
//   QueueCommand    queue add | list | run               (cli_queue.cpp)
//   ExportCommand   export                               (cli_export.cpp)
//   SummaryCommand  summary, presets                     (cli_summary.cpp)
// run() returns the exit status, or throws InputError for cliMain's handler.
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cli_settings.h"
#include "studio/session.h"

namespace studio::cli {

// The CLI's own loop for one session (progress, Ctrl-C): its exit status.
using RunSession = std::function<int(Session&)>;

// A TorchScript model.path runs the code in it: said, with its SHA-256.
void noteTorchScript(const TrainConfig& c);
void noteTorchScriptOfRun(const std::string& runDir);

class TrainCommands {
 public:
  explicit TrainCommands(CLI::App& app);
  bool chosen() const;
  int run(const RunSession& runSession);

 private:
  CLI::App *m_train, *m_resume, *m_continue, *m_fork;
  SettingsSource m_settings;
  std::string m_out, m_resumeDir, m_continueDir, m_forkDir;
  ContinueOptions m_more;
  ForkOptions m_forkOptions;
};

class ProbeCommands {
 public:
  explicit ProbeCommands(CLI::App& app);
  bool chosen() const { return m_lrFind->parsed() || m_batchFind->parsed(); }
  int run(const RunSession& runSession);

 private:
  int lrFind(const RunSession& runSession);
  int batchFind(const RunSession& runSession);
  CLI::App *m_lrFind, *m_batchFind;
  SettingsSource m_findSettings, m_batchSettings;
  std::string m_out;
  LrFindOptions m_find;
  BatchFindOptions m_batch;
};

class QueueCommand {
 public:
  explicit QueueCommand(CLI::App& app);
  bool chosen() const { return m_queue->parsed(); }
  int run(const RunSession& runSession);

 private:
  CLI::App *m_queue, *m_add, *m_list;
  SettingsSource m_settings;
  std::vector<std::string> m_grids;
  std::string m_file = "runs/queue.json";
};

class ExportCommand {
 public:
  explicit ExportCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  int run();

 private:
  CLI::App* m_cmd;
  std::string m_run, m_out;
  ExportOptions m_options;
};

class SummaryCommand {
 public:
  explicit SummaryCommand(CLI::App& app);
  bool chosen() const { return m_summary->parsed() || m_presets->parsed(); }
  int run();

 private:
  CLI::App *m_summary, *m_presets;
  SettingsSource m_settings;
};

}  // namespace studio::cli
