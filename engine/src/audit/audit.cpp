#include "studio/audit.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "audit/audit_report.h"
#include "audit/feature_search.h"
#include "audit/parallel_folds.h"
#include "studio/csv_table.h"
#include "studio/data_plan.h"
#include "studio/devices.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/predict.h"
#include "studio/presets.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"
#include "studio/session.h"
#include "studio/sha256.h"

namespace studio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kAuditSettings = "audit_settings.json";
constexpr const char* kAuditState = "audit_state.json";
constexpr const char* kFoldsFolder = "folds";
constexpr int64_t kFewColumns = 16;  // a feature space this small: near pairs by cosine say little

// What the audit can read so far; anything else is refused by name.
void checkAuditable(const TrainConfig& c, const AuditOptions& o) {
  const int folds = o.folds;
  if (folds < 2 || folds > 20)
    throw ConfigFileError("--folds must be from 2 to 20 (got " + std::to_string(folds) + ")");
  if (!(o.similarity > 0 && o.similarity <= 1))
    throw ConfigFileError("--similarity must be above 0 and at most 1 (got " + std::to_string(o.similarity) + ")");
  if (o.neighbours < 1 || o.neighbours > 100)
    throw ConfigFileError("--neighbours must be from 1 to 100 (got " + std::to_string(o.neighbours) + ")");
  if (!(o.residualZ > 0)) throw ConfigFileError("--residual-z must be above 0");
  if (o.parallel < 1) throw ConfigFileError("--parallel must be 1 or more (got " + std::to_string(o.parallel) + ")");
  if (c.data.format == DataFormat::idx)
    throw ConfigFileError(
        "the audit reads image folders and tables (data.format image_folder or csv); these settings have "
        "data.format idx: the audit names each suspect by its file or row");
  if (c.data.cv_folds != 0)
    throw ConfigFileError("data.cv_folds is the audit's to set (got " + std::to_string(c.data.cv_folds) +
                          "): leave it 0 and give --folds");
  for (const auto& e : validate(c)) throw ConfigFileError(e.text());
}

TrainConfig foldConfig(const TrainConfig& base, const std::string& dir, int fold, int folds) {
  TrainConfig c = base;
  c.name = base.name + "-fold-" + std::to_string(fold);
  c.output.dir = dir + "/" + kFoldsFolder;
  c.data.cv_folds = folds;
  c.data.cv_fold = fold;
  return c;
}

// summary.json's status ("" before it has one).
std::optional<RunStatus> runStatus(const std::string& runDir) { return readSummaryFile(runDir).summary.status; }

struct AuditState {
  AuditOptions options;
  std::map<int, std::string> runs;  // fold -> run folder
};

// A fold's run folder as the state file keeps it: relative to the audit
// folder, so a copied or moved audit resumes from its own folds.
std::string storedRun(const std::string& dir, const std::string& run) {
  const fs::path rel = fs::path(run).lexically_relative(dir);
  return !rel.empty() && *rel.begin() != ".." ? rel.generic_string() : run;
}

// The run folder of a stored path: relative to the audit folder; an
// absolute one (an older audit's) as it is when it is there, else the run of
// that name in this audit's folds (a copied audit's).
std::string runOfStored(const std::string& dir, const std::string& stored) {
  const fs::path p(stored);
  if (p.is_relative()) return (fs::path(dir) / p).lexically_normal().string();
  std::error_code ec;
  const fs::path own = fs::path(dir) / kFoldsFolder / p.filename();
  return !fs::exists(p, ec) && fs::is_directory(own, ec) ? own.string() : stored;
}

AuditState loadState(const std::string& dir) {
  const json j = json::parse(readFileBytes(dir + "/" + kAuditState, "audit state"), nullptr, false);
  if (!j.is_object() || !j.contains("folds") || !j["folds"].is_number_integer())
    throw InputError(dir + "/" + kAuditState + " is not an audit's state file");
  AuditState s;
  s.options.folds = j["folds"].get<int>();
  s.options.similarity = j.value("similarity", s.options.similarity);
  s.options.neighbours = j.value("neighbours", s.options.neighbours);
  s.options.residualZ = j.value("residual_z", s.options.residualZ);
  s.options.parallel = j.value("parallel", s.options.parallel);
  if (j.contains("runs") && j["runs"].is_object())
    for (const auto& [k, v] : j["runs"].items())
      if (v.is_string()) s.runs[std::stoi(k)] = runOfStored(dir, v.get<std::string>());
  return s;
}

// Refuses a state whose folds are not its runs' (audit_state.json edited:
// 3 folds made 5 kept three folds of the 3-fold split and trained two more).
void checkStateFolds(const std::string& dir, const AuditState& s) {
  const std::string file = dir + "/" + kAuditState;
  for (const auto& [fold, run] : s.runs) {
    if (fold < 1 || fold > s.options.folds)
      throw InputError(file + " names a run for fold " + std::to_string(fold) + " of an audit of " +
                       std::to_string(s.options.folds) + " folds: it was edited; start a new audit");
    const json settings =
        json::parse(readFileBytes(run + "/" + run_files::kSettings, "fold run settings"), nullptr, false);
    const json data = settings.is_object() ? settings.value("data", json::object()) : json::object();
    const int folds = data.is_object() ? data.value("cv_folds", 0) : 0;
    const int which = data.is_object() ? data.value("cv_fold", 0) : 0;
    if (folds != s.options.folds || which != fold)
      throw InputError(file + " says " + std::to_string(s.options.folds) + " folds, but the run of its fold " +
                       std::to_string(fold) + " (" + run + ") was trained as fold " + std::to_string(which) + " of " +
                       std::to_string(folds) +
                       " (data.cv_folds, data.cv_fold): an audit's folds cannot change; start a new audit with "
                       "--folds " +
                       std::to_string(s.options.folds));
  }
}

void saveState(const std::string& dir, const AuditState& s) {
  json runs = json::object();
  for (const auto& [k, v] : s.runs) runs[std::to_string(k)] = storedRun(dir, v);
  writeFileAtomically(dir + "/" + kAuditState, json{{"folds", s.options.folds},
                                                    {"similarity", s.options.similarity},
                                                    {"neighbours", s.options.neighbours},
                                                    {"residual_z", s.options.residualZ},
                                                    {"parallel", s.options.parallel},
                                                    {"runs", runs}}
                                                       .dump(2) +
                                                   "\n");
}

bool isTable(const DataPlan& p) { return p.kind == DataKind::Table; }

// What the reports call an example: an image's file, a table's "file row N".
std::string sourceOf(const DataPlan& p, int64_t item) {
  return isTable(p) ? exampleSource(p, item) : p.files[static_cast<size_t>(item)];
}

struct FoldOutputs {
  std::vector<float> values;       // held-out examples x outputs
  std::vector<double> thresholds;  // multi-label: each label's, as predict applies them
};

// The outputs of fold's model for its held-out examples (examples x classes
// probabilities, or x targets: values or label probabilities), fed as
// predict feeds them: the images' files, or the training table's rows (the
// whole table is read; the fold's rows are taken).
FoldOutputs foldOutputs(const DataPlan& foldPlan, const std::string& runDir, int fold) {
  Predictor predictor(runDir);
  const auto k = static_cast<size_t>(foldPlan.outputs());
  PredictionReport report;
  std::vector<int64_t> rows;  // of report, per held-out example
  if (isTable(foldPlan)) {
    report = predictor.predict(foldPlan.trainTable);
    if (static_cast<int64_t>(report.rows.size()) != foldPlan.trainTableRows || report.skipped > 0)
      throw DataError("fold " + std::to_string(fold) + ": " + foldPlan.trainTable + " no longer reads as it did (" +
                      std::to_string(report.rows.size()) + " rows predicted of " +
                      std::to_string(foldPlan.trainTableRows) + ")");
    rows = foldPlan.test.items;
  } else {
    std::vector<std::string> files;
    for (int64_t item : foldPlan.test.items) files.push_back(foldPlan.files[static_cast<size_t>(item)]);
    report = predictor.predictFiles(files);
    if (report.skipped > 0)
      throw DataError("fold " + std::to_string(fold) + ": " + std::to_string(report.skipped) +
                      " of its images could not be read again: " + report.rows.front().error);
    for (size_t i = 0; i < files.size(); ++i) rows.push_back(static_cast<int64_t>(i));
  }
  const std::vector<float>& all = foldPlan.hasTargets() ? report.values : report.probabilities;
  FoldOutputs out;
  out.thresholds = report.thresholds;
  for (int64_t row : rows)
    out.values.insert(out.values.end(), all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(row) * k),
                      all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(row + 1) * k));
  return out;
}

// A fold's figure on its held-out examples (AuditResult::metric).
double foldScore(const DataPlan& plan, const std::vector<double>& given, const std::vector<double>& outputs,
                 const std::vector<int64_t>& labels, const std::vector<double>& thresholds) {
  const auto k = static_cast<size_t>(plan.outputs());
  const size_t n = labels.size();
  if (n == 0) return 0;
  if (plan.regression()) return r2Score(given, outputs, static_cast<int64_t>(k));
  int64_t right = 0;
  if (plan.multilabel()) {
    for (size_t i = 0; i < n * k; ++i) {
      const double threshold = thresholds.size() == k ? thresholds[i % k] : 0.5;
      right += (outputs[i] >= threshold) == (given[i] != 0);
    }
    return static_cast<double>(right) / static_cast<double>(n * k);
  }
  for (size_t i = 0; i < n; ++i) {
    size_t best = 0;
    for (size_t c = 1; c < k; ++c)
      if (outputs[i * k + c] > outputs[i * k + best]) best = c;
    right += static_cast<int64_t>(best) == labels[i];
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

// Every training example's out-of-fold outputs: each fold's model on the
// fold it never trained on, as predict feeds files (its run's preprocessing).
void outOfFold(const TrainConfig& base, const DataPlan& plan, const std::string& dir, const AuditState& state,
               AuditResult& r, std::vector<double>& outputs, std::vector<int>& foldOf) {
  r.classes = plan.classNames;
  r.targets = plan.targetNames;
  const auto k = static_cast<size_t>(plan.outputs());
  const auto T = static_cast<size_t>(plan.table.targets);
  auto givenOf = [&](int64_t item, std::vector<double>& into) {
    for (size_t t = 0; t < T; ++t) into.push_back(plan.table.y[static_cast<size_t>(item) * T + t]);
  };
  std::unordered_map<int64_t, size_t> position;
  for (size_t i = 0; i < plan.train.items.size(); ++i) {
    position[plan.train.items[i]] = i;
    r.files.push_back(sourceOf(plan, plan.train.items[i]));
    r.labels.push_back(plan.train.labels[i]);
    if (plan.hasTargets()) givenOf(plan.train.items[i], r.given);
  }
  outputs.assign(r.files.size() * k, 0.0);
  foldOf.assign(r.files.size(), 0);
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    const DataPlan foldPlan = planData(foldConfig(base, dir, fold, state.options.folds));
    const FoldOutputs p = foldOutputs(foldPlan, state.runs.at(fold), fold);
    const size_t n = foldPlan.test.items.size();
    std::vector<double> given, held;
    for (size_t i = 0; i < n; ++i) {
      const size_t at = position.at(foldPlan.test.items[i]);
      foldOf[at] = fold;
      for (size_t c = 0; c < k; ++c) held.push_back(outputs[at * k + c] = p.values[i * k + c]);
      if (plan.hasTargets()) givenOf(foldPlan.test.items[i], given);
    }
    AuditFold& f = r.folds[static_cast<size_t>(fold - 1)];
    f.examples = static_cast<int64_t>(n);
    f.score = foldScore(plan, given, held, foldPlan.test.labels, p.thresholds);
  }
  for (size_t i = 0; i < foldOf.size(); ++i)
    if (foldOf[i] == 0)
      throw Error("audit: " + r.files[i] + " is in no fold (a bug: the folds must cover the training set)");
}

// The suspects: confident learning for classes, label by label for a
// multi-label set, the largest residuals for a regression.
void findSuspects(const DataPlan& plan, const std::vector<double>& outputs, AuditResult& r) {
  if (plan.regression()) {
    r.residualIssues = findResidualIssues(r.given, outputs, plan.outputs(), r.options.residualZ);
  } else if (plan.multilabel()) {
    std::vector<int64_t> given(r.given.size());
    for (size_t i = 0; i < given.size(); ++i) given[i] = r.given[i] != 0 ? 1 : 0;
    r.tagIssues = findTagIssues(given, outputs, plan.outputs());
  } else {
    r.labelIssues = findLabelIssues(r.labels, outputs, plan.classes());
  }
}

// Exact copies by content: pairs within the training set, and between the
// training and the test sets.
void exactDuplicates(const DataPlan& plan, AuditResult& r) {
  // An image's bytes, a table row's feature values.
  auto hashOf = [&](int64_t item) {
    if (!isTable(plan)) return sha256OfFile(plan.files[static_cast<size_t>(item)]);
    const auto f = static_cast<size_t>(plan.table.features);
    const char* row = reinterpret_cast<const char*>(plan.table.x.data() + static_cast<size_t>(item) * f);
    return sha256Hex(std::string_view(row, f * sizeof(float)));
  };
  std::unordered_map<std::string, std::vector<std::string>> byHash;
  for (int64_t item : plan.train.items) byHash[hashOf(item)].push_back(sourceOf(plan, item));
  for (int64_t item : plan.test.items) {
    const std::string file = sourceOf(plan, item);
    const std::string hash = hashOf(item);
    if (auto it = byHash.find(hash); it != byHash.end())
      for (const auto& train : it->second) r.duplicates.push_back({"train-test", train, file, hash});
  }
  r.trainTestDuplicates = static_cast<int64_t>(r.duplicates.size());
  for (const auto& [hash, files] : byHash)
    for (size_t i = 1; i < files.size(); ++i) r.duplicates.push_back({"train-train", files[0], files[i], hash});
  r.trainTrainDuplicates = static_cast<int64_t>(r.duplicates.size()) - r.trainTestDuplicates;
}

// Near pairs (train-test, then within training, exact pairs left out) and
// each training example's outlier score, in one feature space.
void searchFeatures(const std::vector<float>& train, const std::vector<float>& test, int64_t dim,
                    const std::vector<std::string>& testNames, const AuditState& state, AuditResult& r) {
  std::set<std::pair<std::string, std::string>> exact;
  for (const auto& d : r.duplicates) exact.insert({d.first, d.second});
  // Each training file's nearest neighbour, in training or in test, from
  // the same products as the near pairs.
  std::vector<SimilarPair> inTrain, inTest;
  for (const auto& p : similarPairs(train, test, dim, state.options.similarity, false, &inTest)) {
    const std::string& a = r.files.at(static_cast<size_t>(p.first));
    const std::string& b = testNames.at(static_cast<size_t>(p.second));
    if (exact.count({a, b})) continue;
    r.duplicates.push_back({"near train-test", a, b, "", p.similarity});
    ++r.nearTrainTest;
  }
  for (const auto& p : similarPairs(train, train, dim, state.options.similarity, true, &inTrain)) {
    const std::string& a = r.files.at(static_cast<size_t>(p.first));
    const std::string& b = r.files.at(static_cast<size_t>(p.second));
    if (exact.count({a, b}) || exact.count({b, a})) continue;
    r.duplicates.push_back({"near train-train", a, b, "", p.similarity});
    ++r.nearTrainTrain;
  }
  // Features that do not tell the examples apart make many of them "near":
  // such near-duplicates are no such thing.
  if (r.nearTrainTrain + r.nearTrainTest > static_cast<int64_t>(r.files.size()))
    r.featureNote = "more near-duplicate pairs (" + std::to_string(r.nearTrainTrain + r.nearTrainTest) +
                    ") than training examples: the features do not tell the examples apart well (cross-validated " +
                    r.metric + " " + std::to_string(r.meanScore).substr(0, 5) +
                    "), so near-duplicates and outliers say little; train longer, or raise --similarity";
  // A table of few columns: a cosine over so few numbers finds many rows
  // "near" that are not (they merely point the same way).
  else if (dim < kFewColumns && r.nearTrainTrain + r.nearTrainTest > 0)
    r.featureNote = "near pairs are measured by the cosine of " + std::to_string(dim) +
                    " standardised columns, too few to tell near copies from rows that merely point the same "
                    "way: the exact copies (same values) are the reliable ones";
  r.nearest.assign(r.files.size(), "");
  r.nearestSimilarity.assign(r.files.size(), 0.0);
  for (const auto& p : inTrain) {
    r.nearest[static_cast<size_t>(p.first)] = r.files.at(static_cast<size_t>(p.second));
    r.nearestSimilarity[static_cast<size_t>(p.first)] = p.similarity;
  }
  for (const auto& p : inTest)
    if (r.nearest[static_cast<size_t>(p.first)].empty() ||
        p.similarity > r.nearestSimilarity[static_cast<size_t>(p.first)]) {
      r.nearest[static_cast<size_t>(p.first)] = testNames.at(static_cast<size_t>(p.second));
      r.nearestSimilarity[static_cast<size_t>(p.first)] = p.similarity;
    }
  const std::vector<double> score = outlierScores(train, dim, r.labels, state.options.neighbours);
  for (size_t i = 0; i < score.size(); ++i) r.outliers.push_back({static_cast<int64_t>(i), score[i]});
  std::stable_sort(r.outliers.begin(), r.outliers.end(),
                   [](const Outlier& a, const Outlier& b) { return a.score > b.score; });
}

// A table's rows standardised by the training rows' means and spreads: a
// table's feature space (its columns are what tell rows apart).
std::vector<float> standardisedRows(const DataPlan& plan, const std::vector<int64_t>& items) {
  const auto f = static_cast<size_t>(plan.table.features);
  const auto n = std::max<double>(1, static_cast<double>(plan.train.items.size()));
  std::vector<double> mean(f, 0.0), sq(f, 0.0);
  for (int64_t item : plan.train.items)
    for (size_t j = 0; j < f; ++j) mean[j] += plan.table.x[static_cast<size_t>(item) * f + j] / n;
  for (int64_t item : plan.train.items)
    for (size_t j = 0; j < f; ++j) {
      const double d = plan.table.x[static_cast<size_t>(item) * f + j] - mean[j];
      sq[j] += d * d / n;
    }
  std::vector<float> out;
  for (int64_t item : items)
    for (size_t j = 0; j < f; ++j) {
      const double sd = std::sqrt(sq[j]);
      out.push_back(
          static_cast<float>((plan.table.x[static_cast<size_t>(item) * f + j] - mean[j]) / (sd > 0 ? sd : 1.0)));
    }
  return out;
}

// Near copies and outliers in one feature space: for images, fold 1's
// model's penultimate features of every training and test file; for a
// table, its standardised rows.
void featureSearches(const DataPlan& plan, const AuditState& state, AuditResult& r) {
  std::vector<std::string> testNames;
  for (int64_t item : plan.test.items) testNames.push_back(sourceOf(plan, item));
  if (isTable(plan)) {
    searchFeatures(standardisedRows(plan, plan.train.items), standardisedRows(plan, plan.test.items),
                   plan.table.features, testNames, state, r);
    return;
  }
  PredictOptions o;
  o.penultimate = true;
  Predictor predictor(state.runs.at(1), o);
  const PredictionReport train = predictor.predictFiles(r.files);
  if (train.penultimateSize == 0) {
    r.featureNote = "the model's layers are not the studio's (TorchScript): no near-duplicates or outliers";
    return;
  }
  const PredictionReport test = predictor.predictFiles(testNames);
  searchFeatures(train.penultimate, test.penultimate, train.penultimateSize, testNames, state, r);
}

// The folds one after another, in this process, until one stops.
void runFoldsHere(const std::string& dir, const TrainConfig& base, AuditState& state, const FoldRunner& runFold) {
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    std::string runDir = state.runs.count(fold) ? state.runs[fold] : std::string();
    if (finishedStatus(runStatus(runDir))) continue;
    Session session;
    if (!runDir.empty() && fs::is_regular_file(runDir + "/" + run_files::kLastCheckpoint)) {
      log::info("audit: resuming fold " + std::to_string(fold) + " in " + runDir);
      session.resume(runDir);
    } else {
      session.start(foldConfig(base, dir, fold, state.options.folds));
      state.runs[fold] = session.progress().runDir;
      saveState(dir, state);
      log::info("audit: fold " + std::to_string(fold) + " of " + std::to_string(state.options.folds) + " in " +
                state.runs[fold]);
    }
    runFold(session, fold, state.options.folds);
    const RunSummary s = session.summary();
    if (s.status == RunStatus::failed) throw Error("audit: fold " + std::to_string(fold) + " failed: " + s.error);
    if (!finishedStatus(s.status)) return;
  }
}

// The unfinished folds at once, each a process of the CLI.
void runFoldsAtOnce(const std::string& dir, const TrainConfig& base, AuditState& state, const ParallelStops& stops) {
  std::vector<FoldProcess> jobs;
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    const std::string runDir = state.runs.count(fold) ? state.runs[fold] : std::string();
    if (finishedStatus(runStatus(runDir))) continue;
    FoldProcess job;
    job.fold = fold;
    if (!runDir.empty() && fs::is_regular_file(runDir + "/" + run_files::kLastCheckpoint)) {
      job.resumeDir = runDir;
    } else {
      job.configFile = dir + "/" + kFoldsFolder + "/fold-" + std::to_string(fold) + ".json";
      saveConfigFile(foldConfig(base, dir, fold, state.options.folds), job.configFile);
    }
    jobs.push_back(job);
  }
  FoldProcessOptions o;
  o.cli = state.options.cli.empty() ? executablePath() : state.options.cli;
  o.parallel = state.options.parallel;
  o.stopRequested = stops.requested;
  int gpus = 0;
  for (const auto& d : computeDevices()) gpus += d.name.rfind("cuda", 0) == 0;
  const std::string& device = base.performance.device;
  const bool cpu = device == "cpu" || gpus == 0;
  if (cpu && base.performance.threads == 0) o.threadsEach = std::max(1, defaultCpuThreads() / o.parallel);
  if (!cpu && gpus > 1 && (device == "auto" || device == "cuda"))
    for (int g = 0; g < gpus; ++g) o.gpus.push_back(g);
  log::info("audit: " + std::to_string(jobs.size()) + " folds, " + std::to_string(o.parallel) + " at once" +
            (o.threadsEach ? ", " + std::to_string(o.threadsEach) + " CPU threads each"
                           : (o.gpus.empty() ? "" : ", one GPU each")));
  o.onRunDir = [&](int fold, const std::string& runDir) {
    state.runs[fold] = runDir;
    saveState(dir, state);
    log::info("audit: fold " + std::to_string(fold) + " of " + std::to_string(state.options.folds) + " in " + runDir);
  };
  const std::vector<std::string> said = runFoldProcesses(jobs, o);
  const bool stopped = stops.requested && stops.requested();
  if (stops.ended) stops.ended();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const int fold = jobs[i].fold;
    const std::string runDir = state.runs.count(fold) ? state.runs[fold] : std::string();
    const std::optional<RunStatus> status = runStatus(runDir);
    if (finishedStatus(status) || stopped) continue;
    throw Error("audit: fold " + std::to_string(fold) + " did not finish" +
                (status ? " (" + nameOf(*status) + ")" : std::string()) + (said[i].empty() ? "" : ":\n" + said[i]));
  }
}

AuditResult continueAudit(const std::string& dir, const TrainConfig& base, AuditState state, const FoldRunner& runFold,
                          const ParallelStops& stops) {
  AuditResult r;
  r.dir = dir;
  r.options = state.options;
  r.task = base.task.kind;
  r.metric = base.task.kind == TaskKind::regression   ? "r2"
             : base.task.kind == TaskKind::multilabel ? "label_accuracy"
                                                      : "accuracy";
  if (state.options.parallel > 1) {
    runFoldsAtOnce(dir, base, state, stops);  // calls stops.ended before it checks the folds
  } else {
    runFoldsHere(dir, base, state, runFold);
    // What follows is the audit's own work: a signal quits it at once again.
    if (stops.ended) stops.ended();
  }
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    AuditFold f;
    f.fold = fold;
    f.runDir = state.runs.count(fold) ? state.runs[fold] : std::string();
    f.status = runStatus(f.runDir);
    r.folds.push_back(f);
  }
  for (const auto& f : r.folds)
    if (!finishedStatus(f.status)) return r;  // stopped: resume the audit later
  // The data as the audit's settings plan it (no fold): its training
  // examples are what the folds cover; its test split is for the leakage.
  const DataPlan plan = planData(base);
  std::vector<double> outputs;
  std::vector<int> foldOf;
  outOfFold(base, plan, dir, state, r, outputs, foldOf);
  r.examples = static_cast<int64_t>(r.files.size());
  double sum = 0, sq = 0;
  for (const auto& f : r.folds) sum += f.score;
  r.meanScore = sum / static_cast<double>(r.folds.size());
  for (const auto& f : r.folds) sq += (f.score - r.meanScore) * (f.score - r.meanScore);
  r.stdScore = std::sqrt(sq / static_cast<double>(r.folds.size() - 1));
  findSuspects(plan, outputs, r);
  exactDuplicates(plan, r);
  featureSearches(plan, state, r);
  writeAuditReport(dir, r, outputs, foldOf);
  r.complete = true;
  return r;
}

}  // namespace

namespace {

// Every training example is audited, those a validation split would hold
// out too (issue 60, item 7: a leaked copy there was never reported, moved
// labels there never examined, and each fold's "best" weights were picked
// on that uncorrected split). A multi-label run that tunes its thresholds
// keeps its validation split; what is left out is said.
TrainConfig auditedSettings(const TrainConfig& config) {
  TrainConfig c = config;
  const bool thresholds = c.task.kind == TaskKind::multilabel && c.task.tune_thresholds;
  if (c.data.val_fraction > 0 && !thresholds) {
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%g", c.data.val_fraction);
    log::warn(std::string("audit: data.val_fraction ") + fraction +
              " is not used: every training example is dealt into the folds and audited (a validation split "
              "would go unaudited, and the folds' best weights would be picked on it)");
    c.data.val_fraction = 0;
  }
  const DataPlan plan = planData(c);  // the data's own problems, named before any folder is made
  if (!plan.val.items.empty())
    log::warn("audit: the " + std::to_string(plan.val.size()) + " validation examples (" + plan.valFrom +
              ") are not audited: the folds cover the training examples" +
              (thresholds ? " (task.tune_thresholds tunes the thresholds on them)"
                          : "; move them among the training examples to audit them"));
  return c;
}

}  // namespace

AuditResult runAudit(const TrainConfig& given, const AuditOptions& options, const FoldRunner& runFold,
                     const ParallelStops& stops) {
  checkAuditable(given, options);
  const TrainConfig config = auditedSettings(given);
  std::string dir = config.output.dir + "/" + run_files::folderStamp() + "-audit-" + config.name;
  for (int n = 2; fs::exists(dir); ++n)
    dir = config.output.dir + "/" + run_files::folderStamp() + "-audit-" + config.name + "-" + std::to_string(n);
  fs::create_directories(dir + "/" + kFoldsFolder);
  saveConfigFile(config, dir + "/" + kAuditSettings);
  AuditState state;
  state.options = options;
  saveState(dir, state);
  return continueAudit(dir, config, state, runFold, stops);
}

AuditResult resumeAudit(const std::string& dir, const FoldRunner& runFold, int parallel, const ParallelStops& stops) {
  if (!fs::is_regular_file(dir + "/" + kAuditState) || !fs::is_regular_file(dir + "/" + kAuditSettings))
    throw InputError(dir + " is not an audit folder (no " + kAuditState + " and " + kAuditSettings + ")");
  const TrainConfig config = loadConfigFile(dir + "/" + kAuditSettings);
  AuditState state = loadState(dir);
  checkStateFolds(dir, state);
  if (parallel > 0) state.options.parallel = parallel;
  checkAuditable(config, state.options);
  return continueAudit(dir, config, state, runFold, stops);
}

}  // namespace studio
