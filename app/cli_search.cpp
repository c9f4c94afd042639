#include "cli_search.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"
#include "studio/presets.h"
#include "studio/run_layout.h"
#include "studio/studio_python.h"

namespace studio::cli {
namespace fs = std::filesystem;

namespace {

// What makes two studies the same study: all but how many trials, how many
// at once, and what to run first.
nlohmann::json identity(nlohmann::json j) {
  for (const char* k : {"trials", "parallel", "enqueued"}) j.erase(k);
  return j;
}

nlohmann::json readSpec(const std::string& file) {
  const auto j = nlohmann::json::parse(readFileBytes(file, "study file"), nullptr, false);
  if (!j.is_object()) throw ConfigFileError(file + " is not a study's search.json (not a JSON object)");
  return j;
}

}  // namespace

SearchCommand::SearchCommand(CLI::App& app) {
  m_cmd = app.add_subcommand("search", "Hyperparameter search with Optuna: trials are runs, hopeless ones are pruned");
  m_settings.addTo(m_cmd);
  m_cmd->add_option("--resume", m_resume, "Continue the study in this folder (runs/search-NAME)")
      ->check(kNamesSomething)
      ->excludes(m_settings.preset)
      ->excludes(m_settings.config);
  m_cmd->add_option("--space", m_space,
                    "A setting's range: key=float:LOW:HIGH[:log], key=int:LOW:HIGH[:log|pow2] or key=choice:A,B "
                    "(repeatable)");
  m_cmd->add_option("--trial-set", m_spec.trialSettings,
                    "A setting for the trials only, not for --then-train (fewer epochs, a data limit): key=value");
  m_cmd->add_option("--enqueue", m_spec.enqueued, "Run these values first: \"key=value key=value\" (repeatable)");
  m_cmd->add_option("--metric", m_spec.metric, "The evaluation metric to optimise (default eval_accuracy)");
  m_cmd->add_option("--direction", m_spec.direction, "maximize or minimize (default: the metric's)");
  m_trials = m_cmd->add_option("--trials", m_spec.trials, "How many trials (default 20)");
  m_cmd->add_option("--sampler", m_spec.sampler, "tpe (default), random or grid");
  m_cmd->add_option("--pruner", m_spec.pruner, "hyperband (default), halving, median or none");
  m_parallel = m_cmd->add_option("--parallel", m_spec.parallel, "Trials at once (default 1)");
  m_cmd->add_option("--seed", m_spec.seed, "The sampler's seed (default 0)");
  m_cmd->add_option("--name", m_spec.name, "The study's name (default: the settings' name and the time)");
  m_cmd->add_option("--out", m_out, "Folder for run folders and the study (output.dir)")->check(kNamesSomething);
  m_cmd->add_flag("--then-train", m_spec.thenTrain, "At the end, train the best settings without --trial-set");
  m_cmd->add_option("--storage", m_spec.storage,
                    "Keep the study in a database that other machines' runners join: postgresql://USER@HOST/DB "
                    "(or mysql://); the password from PGPASSWORD or ~/.pgpass, never in the URL");
  m_cmd
      ->add_flag("--join", m_join,
                 "Add this machine's runner to the study --study in --storage: its trials train here, under --out")
      ->excludes(m_settings.preset)
      ->excludes(m_settings.config);
  m_cmd->add_option("--study", m_study, "The study to --join (its --name)");
}

int SearchCommand::join() {
  if (m_spec.storage.empty() || m_study.empty())
    throw ConfigFileError("search --join needs --storage URL and --study NAME (the study's --name)");
  checkStorageUrl(m_spec.storage);
  if (!m_resume.empty()) throw ConfigFileError("search --join: --resume continues a study of this machine's");
  // The spec comes from the study in the database: the runner reads it there
  // and writes the study's search.json here. What this machine adds: how many
  // trials at once, where its runs go, and the space it expects (checked).
  nlohmann::json local{{"join", true},
                       {"storage", m_spec.storage},
                       {"name", m_study},
                       {"parallel", m_parallel->count() ? m_spec.parallel : 1},
                       {"output_dir", m_out.empty() ? std::string("runs") : m_out}};
  if (!m_space.empty()) {
    nlohmann::json texts = nlohmann::json::array();
    for (const auto& text : m_space) texts.push_back(searchParamText(parseSearchParam(text)));
    local["space_texts"] = texts;
  }
  if (m_trials->count()) local["trials"] = m_spec.trials;
  const std::string folder = (fs::path(local["output_dir"].get<std::string>()) / ("search-" + m_study)).string();
  return startRunner(folder, local, /*joining=*/true);
}

int SearchCommand::run() {
  if (m_join) return join();
  if (!m_study.empty()) throw ConfigFileError("search: --study names the study to --join; a new study's is --name");
  std::string folder;
  nlohmann::json spec;
  if (!m_resume.empty()) {
    const std::string file = (fs::path(m_resume) / "search.json").string();
    if (!fs::is_regular_file(file))
      throw ConfigFileError("--resume " + m_resume + " is not a study's folder (it has no search.json)");
    if (!m_space.empty() || !m_settings.overrides.empty())
      throw ConfigFileError("--resume continues a study as it was; --space and --set belong to a new search");
    SearchSpec s = searchSpecFromJson(readSpec(file), file);
    if (m_trials->count()) s.trials = m_spec.trials;
    if (m_parallel->count()) s.parallel = m_spec.parallel;
    s.thenTrain = m_spec.thenTrain;
    checkSearch(s);
    folder = m_resume;
    spec = searchSpecJson(s);
  } else {
    if (m_space.empty()) throw ConfigFileError("search: give at least one --space key=... (the settings to vary)");
    m_spec.base = m_settings.load();
    if (!m_out.empty()) m_spec.base.output.dir = m_out;
    for (const auto& text : m_space) m_spec.space.push_back(parseSearchParam(text));
    if (m_spec.name.empty()) m_spec.name = m_spec.base.name + "-" + run_files::folderStamp();
    checkSearch(m_spec);
    for (const auto& w : searchWarnings(m_spec)) std::fprintf(stderr, "warning: %s\n", w.c_str());
    folder = searchFolder(m_spec);
    spec = searchSpecJson(m_spec);
    const std::string file = (fs::path(folder) / "search.json").string();
    if (fs::exists(file)) {
      if (identity(readSpec(file)) != identity(spec))
        throw ConfigFileError("a study named " + m_spec.name + " is in " + folder +
                              " with other settings; give another --name, or --resume " + folder + " to continue it");
      std::fprintf(stderr, "search: continuing the study in %s\n", folder.c_str());
    }
  }
  return startRunner(folder, spec, /*joining=*/false);
}

int SearchCommand::startRunner(const std::string& folder, const nlohmann::json& spec, bool joining) {
  // Made here: the runner removes it again when its first connection fails.
  const bool made = !fs::exists(folder) && fs::create_directories(folder);
  // One search of a study at a time: the lock passes to the runner (kept
  // open across exec) and ends with it, however it ends.
  const std::string lock = (fs::path(folder) / "study.lock").string();
  const int held = lockFile(lock, /*wait=*/false);
  if (held < 0)
    throw InputError("the study in " + folder + " is in use by another search (its runner holds " + lock +
                     "); nothing was changed: wait for that search to end, or stop it, then --resume " + folder);
  ::fcntl(held, F_SETFD, 0);  // not closed on exec
  writeFileAtomically((fs::path(folder) / "search.json").string(), spec.dump(2) + "\n");

  const std::string python = studioPython(), script = studioScript("search/studio_search.py", "STUDIO_SEARCH_RUNNER");
  std::string self = executablePath();
  if (self.empty()) self = "training-studio-cli";
  // A stop from here on (the window sends one as soon as it reads this line)
  // is for the runner: until it has set its own handlers (Python starting, a
  // few tens of milliseconds; seconds under ASan) it would kill this process
  // (exit 143) or the runner before the study is written. SIGINT and SIGTERM
  // are held pending across exec, and the runner unblocks them once its
  // handlers are in place. Should exec fail they stay held: the message
  // below is said, not cut by a pending stop.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stops, nullptr);
  // The study's folder first, so the window knows what to resume even when
  // the runner is stopped before it says anything.
  std::printf("search: study in %s\n", fs::absolute(folder).lexically_normal().string().c_str());
  // -B: no __pycache__ beside the script (the package's share/ is not writable).
  std::vector<std::string> args{python, "-B", script, "--study", folder, "--cli", self};
  if (m_spec.thenTrain) args.emplace_back("--then-train");
  if (joining) args.emplace_back("--join");
  if (made) args.emplace_back("--new-folder");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp(python.c_str(), argv.data());
  throw InputError("cannot start the search runner with " + python + ": " + std::strerror(errno) +
                   "; run packaging/setup.sh (it installs Optuna into the studio's Python), or set STUDIO_PYTHON to "
                   "a Python that has optuna");
}

}  // namespace studio::cli
