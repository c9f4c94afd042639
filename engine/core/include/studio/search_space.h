#pragma once
// A hyperparameter search (`training-studio-cli search`, the window's Search
// dialog): the settings to vary and their ranges, the metric and its
// direction, and how Optuna samples and prunes. This unit parses and checks
// what the person gave, before anything runs: every key a setting, every
// range ordered, a log range above zero, every choice and both ends of a
// range valid settings; then writes the study's spec (search.json) that the
// Optuna runner (resources/search/studio_search.py) reads. Sampling, pruning
// and importances are Optuna's; the trials are ordinary run folders.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "studio/train_config.h"

namespace studio {

// study.json's words for a trial's state and the study's: the Optuna runner
// writes them, the window reads them back (choiceNamed).
STUDIO_CHOICE(TrialState, waiting, running, completed, pruned, failed, stopped)
STUDIO_CHOICE(StudyState, running, stopped, done)

// One setting's range: "optimizer.lr=float:1e-4:1e-1:log",
// "train.batch_size=int:32:256:pow2", "model.depth=int:1:4",
// "optimizer.kind=choice:sgd,adamw".
struct SearchParam {
  enum class Kind { Float, Int, Choice };
  std::string key;
  Kind kind = Kind::Float;
  double low = 0, high = 0;
  bool log = false;
  // Int only: the powers of two from low to high (sampled as a choice).
  bool pow2 = false;
  // Choice (and pow2): the values as --set writes them.
  std::vector<std::string> choices;

  // The values a grid takes (choices, pow2, or every int); empty for a float range.
  std::vector<std::string> gridValues() const;
  // "0.001 .. 0.1 (log)", "sgd, adamw"
  std::string describe() const;
};

// Throws ConfigFileError naming the key and what is wrong: not a setting, a
// kind that does not fit it, low >= high, a log bound <= 0, a bad choice.
SearchParam parseSearchParam(const std::string& text);
// The param as "key=kind:..." again (what parseSearchParam reads).
std::string searchParamText(const SearchParam& p);

struct SearchSpec {
  std::string name;  // the study's name; its folder is <output.dir>/search-<name>
  TrainConfig base;  // every trial's settings before its sampled values
  std::vector<SearchParam> space;
  // Settings for the trials only (fewer epochs, a data limit), not for
  // --then-train's run of the best settings: "key=value".
  std::vector<std::string> trialSettings;
  // Trials to run first, each "key=value key=value" over some of the space.
  std::vector<std::string> enqueued;
  std::string metric = "eval_accuracy";  // an evaluation metric of metrics.csv
  std::string direction;                 // maximize | minimize ("" : the metric's own)
  int trials = 20;
  std::string sampler = "tpe";       // tpe | random | grid
  std::string pruner = "hyperband";  // hyperband | halving | median | none
  int parallel = 1;
  int64_t seed = 0;
  bool thenTrain = false;
  // Optuna's RDB storage shared by several machines' runners
  // ("postgresql://USER@HOST[:PORT]/DB" or "mysql://..."); "" : the study's
  // own study.db (SQLite) in its folder. Never with a password in it: the
  // password comes from PGPASSWORD or ~/.pgpass (checkStorageUrl).
  std::string storage;
};

// A storage URL a study may use: postgresql:// or mysql://, without a
// password in any form (USER:PASSWORD@, a query's password=, sslpassword=
// or passfile=): it would be written to search.json and the logs. Throws
// ConfigFileError saying what is wrong, with the URL redacted.
void checkStorageUrl(const std::string& url);
// The URL with its password and secret query values as ***.
std::string redactedStorageUrl(const std::string& url);

inline constexpr const char* kSearchSamplers[] = {"tpe", "random", "grid"};
inline constexpr const char* kSearchPruners[] = {"hyperband", "halving", "median", "none"};

// The evaluation metrics a search can optimise (metrics.csv's eval columns)
// and the direction each is better in.
std::vector<std::string> searchMetrics();
std::string metricDirection(const std::string& metric);

// Every check of a search before it starts; throws ConfigFileError with all
// that is wrong, each on its own line. Fills in direction.
void checkSearch(SearchSpec& spec);

// The space's and the trial settings' settings that have no effect under
// the trial settings (optimizer.lr under OneCycle), each "--space KEY has no
// effect under ...", for the CLI and the window to say before it starts.
std::vector<std::string> searchWarnings(const SearchSpec& spec);

// The study's folder: <base.output.dir>/search-<name>.
std::string searchFolder(const SearchSpec& spec);
// search.json as the runner reads it, and back (a resumed study).
nlohmann::json searchSpecJson(const SearchSpec& spec);
SearchSpec searchSpecFromJson(const nlohmann::json& json, const std::string& file);
// A trial's settings: base, the trial settings, the sampled values.
TrainConfig trialConfig(const SearchSpec& spec, const std::vector<std::string>& assignments);

}  // namespace studio
