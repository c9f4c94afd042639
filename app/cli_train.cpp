#include <cstdio>
#include <filesystem>

#include "cli_commands.h"
#include "studio/model_kinds.h"
#include "studio/run_layout.h"
#include "studio/sha256.h"

namespace studio::cli {

void noteTorchScript(const TrainConfig& c) {
  if (!isModel(c.model.kind, ModelFamily::torchscript)) return;
  std::string sha = "unreadable";
  try {
    sha = sha256OfFile(c.model.path);
  } catch (const std::exception&) {
  }
  std::fprintf(stderr, "note: model.path %s is TorchScript: loading it runs the code in it (SHA-256 %s)\n",
               c.model.path.c_str(), sha.c_str());
}

void noteTorchScriptOfRun(const std::string& runDir) {
  if (std::filesystem::is_regular_file(runDir + "/" + run_files::kSettings))
    noteTorchScript(loadConfigFile(runDir + "/" + run_files::kSettings));
}

TrainCommands::TrainCommands(CLI::App& app) {
  m_train = app.add_subcommand("train", "Start a new run");
  m_settings.addTo(m_train);
  m_train->add_option("--out", m_out, "Folder for run folders (output.dir)")->check(kNamesSomething);

  m_resume = app.add_subcommand("resume", "Continue a stopped run from its last checkpoint");
  m_resume->add_option("run_dir", m_resumeDir, "The run folder")->required();

  m_continue = app.add_subcommand("continue", "Train a finished, early-stopped or stopped run further, in its folder");
  m_continue->add_option("run_dir", m_continueDir, "The run folder")->required();
  m_continue->add_option("--epochs", m_more.epochs, "How many more epochs")->required();
  addChoiceOption(m_continue, "--schedule", m_more.schedule,
                  "restart: the schedule again over the new epochs (default); constant: one learning rate");
  m_continue->add_option("--lr", m_more.lr,
                         "The learning rate (restart: its base; constant: the rate; default: optimizer.lr, or the "
                         "run's last learning rate for constant)");
  m_continue->add_option("--set", m_more.scheduleOverrides,
                         "Edit the restarted schedule: schedule.key=value (repeatable)");

  m_fork = app.add_subcommand("fork", "Start a new run from a run's checkpoint with edited settings");
  m_fork->add_option("run_dir", m_forkDir, "The parent run folder")->required();
  m_fork->add_option("--from", m_forkOptions.from, "best, last (default) or step-N (with output.keep_checkpoints)");
  m_fork->add_option("--set", m_forkOptions.overrides, "Change a setting: dotted.key=value (repeatable)");
  m_fork->add_option("--out", m_forkOptions.outputDir, "Folder for the new run folder (default: beside the parent)")
      ->check(kNamesSomething);
}

bool TrainCommands::chosen() const {
  return m_train->parsed() || m_resume->parsed() || m_continue->parsed() || m_fork->parsed();
}

int TrainCommands::run(const RunSession& runSession) {
  Session session;
  if (m_resume->parsed()) {
    noteTorchScriptOfRun(m_resumeDir);
    session.resume(m_resumeDir);
    return runSession(session);
  }
  if (m_continue->parsed()) {
    noteTorchScriptOfRun(m_continueDir);
    session.continueRun(m_continueDir, m_more);
    return runSession(session);
  }
  if (m_fork->parsed()) {
    noteTorchScriptOfRun(m_forkDir);
    const std::string dir = session.fork(m_forkDir, m_forkOptions);
    std::fprintf(stderr, "forked %s (%s checkpoint) into %s\n", m_forkDir.c_str(), m_forkOptions.from.c_str(),
                 dir.c_str());
    return runSession(session);
  }
  TrainConfig config = m_settings.load();
  if (!m_out.empty()) config.output.dir = m_out;
  noteTorchScript(config);
  session.start(config);
  return runSession(session);
}

}  // namespace studio::cli
