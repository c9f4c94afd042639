#pragma once
// training-studio-cli search (--preset NAME | --config FILE | --resume STUDY_DIR) [--set key=value ...]
//   --space key=float:LOW:HIGH[:log] | key=int:LOW:HIGH[:log|pow2] | key=choice:A,B,... (repeatable)
//   [--trial-set key=value ...] [--enqueue "key=value ..."] [--metric eval_accuracy] [--direction D]
//   [--trials 20] [--sampler tpe|random|grid] [--pruner hyperband|halving|median|none] [--parallel N]
//   [--seed S] [--name NAME] [--out DIR] [--then-train] [--storage postgresql://USER@HOST/DB]
// training-studio-cli search --join --storage URL --study NAME [--space ...] [--parallel N] [--out DIR]
//   adds this machine's runner to a study in a database (the study's spec is
//   in its user attributes; --space, when given, must be the study's).
// Checks the whole search here (studio/search_space.h), writes the study's
// search.json into <output.dir>/search-<name>/, and hands the process to
// the Optuna runner (resources/search/studio_search.py) in the studio's
// Python, which samples, starts each trial as `training-studio-cli --report
// train`, prunes and records. Thread: the CLI's main thread.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli_settings.h"
#include "studio/search_space.h"

namespace studio::cli {

class SearchCommand {
 public:
  explicit SearchCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  // Replaces the process with the runner; returns only when it cannot
  // (throws InputError / IoError for the caller's handler).
  int run();

 private:
  int join();
  int startRunner(const std::string& folder, const nlohmann::json& spec, bool joining);

 public:
 private:
  CLI::App* m_cmd = nullptr;
  SettingsSource m_settings;
  std::vector<std::string> m_space;
  std::string m_resume, m_out, m_study;
  bool m_join = false;
  SearchSpec m_spec;
  CLI::Option *m_trials = nullptr, *m_parallel = nullptr;
};

}  // namespace studio::cli
