#include "studio/audit.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "audit/feature_search.h"
#include "studio/csv_table.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/predict.h"
#include "studio/run_layout.h"
#include "studio/session.h"
#include "studio/sha256.h"

namespace studio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kAuditSettings = "audit_settings.json";
constexpr const char* kAuditState = "audit_state.json";
constexpr const char* kFoldsFolder = "folds";

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // exact: a reader gets the same double back
  return buf;
}

// What the audit can read so far; anything else is refused by name.
void checkAuditable(const TrainConfig& c, const AuditOptions& o) {
  const int folds = o.folds;
  if (folds < 2 || folds > 20)
    throw ConfigFileError("--folds must be from 2 to 20 (got " + std::to_string(folds) + ")");
  if (!(o.similarity > 0 && o.similarity <= 1))
    throw ConfigFileError("--similarity must be above 0 and at most 1 (got " + std::to_string(o.similarity) + ")");
  if (o.neighbours < 1 || o.neighbours > 100)
    throw ConfigFileError("--neighbours must be from 1 to 100 (got " + std::to_string(o.neighbours) + ")");
  if (c.data.format == DataFormat::idx || c.task.kind != TaskKind::classification)
    throw ConfigFileError(
        "the audit reads image folders and tables of classes so far (data.format image_folder or "
        "csv, task.kind classification); these settings have data.format " +
        c.data.format + " and task.kind " + c.task.kind);
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

std::string runStatus(const std::string& runDir) {
  const std::string path = runDir + "/" + run_files::kSummary;
  if (runDir.empty() || !fs::is_regular_file(path)) return "";
  const json j = json::parse(readFileBytes(path, "run summary"), nullptr, false);
  return j.is_object() ? j.value("status", std::string()) : std::string();
}

bool finished(const std::string& status) { return status == "completed" || status == "early-stopped"; }

struct AuditState {
  AuditOptions options;
  std::map<int, std::string> runs;  // fold -> run folder
};

AuditState loadState(const std::string& dir) {
  const json j = json::parse(readFileBytes(dir + "/" + kAuditState, "audit state"), nullptr, false);
  if (!j.is_object() || !j.contains("folds") || !j["folds"].is_number_integer())
    throw InputError(dir + "/" + kAuditState + " is not an audit's state file");
  AuditState s;
  s.options.folds = j["folds"].get<int>();
  s.options.similarity = j.value("similarity", s.options.similarity);
  s.options.neighbours = j.value("neighbours", s.options.neighbours);
  if (j.contains("runs") && j["runs"].is_object())
    for (const auto& [k, v] : j["runs"].items())
      if (v.is_string()) s.runs[std::stoi(k)] = v.get<std::string>();
  return s;
}

void saveState(const std::string& dir, const AuditState& s) {
  json runs = json::object();
  for (const auto& [k, v] : s.runs) runs[std::to_string(k)] = v;
  writeFileAtomically(dir + "/" + kAuditState, json{{"folds", s.options.folds},
                                                    {"similarity", s.options.similarity},
                                                    {"neighbours", s.options.neighbours},
                                                    {"runs", runs}}
                                                       .dump(2) +
                                                   "\n");
}

bool isTable(const DataPlan& p) { return p.kind == DataKind::Table; }

// What the reports call an example: an image's file, a table's "file row N".
std::string sourceOf(const DataPlan& p, int64_t item) {
  return isTable(p) ? exampleSource(p, item) : p.files[static_cast<size_t>(item)];
}

// The probabilities (examples x classes) of fold's model for its held-out
// examples, fed as predict feeds them: the images' files, or the training
// table's rows (the whole table is read; the fold's rows are taken).
std::vector<float> foldProbabilities(const DataPlan& foldPlan, const std::string& runDir, int fold) {
  Predictor predictor(runDir);
  const size_t k = foldPlan.classNames.size();
  std::vector<float> out;
  if (isTable(foldPlan)) {
    const PredictionReport all = predictor.predict(foldPlan.trainTable);
    if (static_cast<int64_t>(all.rows.size()) != foldPlan.trainTableRows || all.skipped > 0)
      throw DataError("fold " + std::to_string(fold) + ": " + foldPlan.trainTable + " no longer reads as it did (" +
                      std::to_string(all.rows.size()) + " rows predicted of " +
                      std::to_string(foldPlan.trainTableRows) + ")");
    for (int64_t item : foldPlan.test.items)
      out.insert(out.end(), all.probabilities.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(item) * k),
                 all.probabilities.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(item + 1) * k));
    return out;
  }
  std::vector<std::string> files;
  for (int64_t item : foldPlan.test.items) files.push_back(foldPlan.files[static_cast<size_t>(item)]);
  const PredictionReport report = predictor.predictFiles(files);
  if (report.skipped > 0)
    throw DataError("fold " + std::to_string(fold) + ": " + std::to_string(report.skipped) +
                    " of its images could not be read again: " + report.rows.front().error);
  return report.probabilities;
}

// Every training file's out-of-fold probabilities: each fold's model on the
// fold it never trained on, as predict feeds files (its run's preprocessing).
void outOfFold(const TrainConfig& base, const DataPlan& plan, const std::string& dir, const AuditState& state,
               AuditResult& r, std::vector<double>& probs, std::vector<int>& foldOf) {
  r.classes = plan.classNames;
  const auto k = static_cast<size_t>(plan.classes());
  std::unordered_map<int64_t, size_t> position;
  for (size_t i = 0; i < plan.train.items.size(); ++i) {
    position[plan.train.items[i]] = i;
    r.files.push_back(sourceOf(plan, plan.train.items[i]));
    r.labels.push_back(plan.train.labels[i]);
  }
  probs.assign(r.files.size() * k, 0.0);
  foldOf.assign(r.files.size(), 0);
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    const DataPlan foldPlan = planData(foldConfig(base, dir, fold, state.options.folds));
    const std::vector<float> p = foldProbabilities(foldPlan, state.runs.at(fold), fold);
    const size_t n = foldPlan.test.items.size();
    int64_t correct = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t at = position.at(foldPlan.test.items[i]);
      foldOf[at] = fold;
      int64_t best = 0;
      for (size_t c = 0; c < k; ++c) {
        probs[at * k + c] = p[i * k + c];
        if (p[i * k + c] > p[i * k + static_cast<size_t>(best)]) best = static_cast<int64_t>(c);
      }
      correct += best == foldPlan.test.labels[i];
    }
    AuditFold& f = r.folds[static_cast<size_t>(fold - 1)];
    f.examples = static_cast<int64_t>(n);
    f.accuracy = n == 0 ? 0 : static_cast<double>(correct) / static_cast<double>(n);
  }
  for (size_t i = 0; i < foldOf.size(); ++i)
    if (foldOf[i] == 0)
      throw Error("audit: " + r.files[i] + " is in no fold (a bug: the folds must cover the training set)");
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
  for (const auto& p : similarPairs(train, test, dim, state.options.similarity, false)) {
    const std::string& a = r.files.at(static_cast<size_t>(p.first));
    const std::string& b = testNames.at(static_cast<size_t>(p.second));
    if (exact.count({a, b})) continue;
    r.duplicates.push_back({"near train-test", a, b, "", p.similarity});
    ++r.nearTrainTest;
  }
  for (const auto& p : similarPairs(train, train, dim, state.options.similarity, true)) {
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
                    ") than training examples: the features do not tell the examples apart well (cross-validated "
                    "accuracy " +
                    std::to_string(r.meanAccuracy).substr(0, 5) +
                    "), so near-duplicates and outliers say little; train longer, or raise --similarity";
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

void writeReport(const std::string& dir, const DataPlan& plan, const AuditResult& r, const std::vector<double>& probs,
                 const std::vector<int>& foldOf) {
  const size_t k = r.classes.size();
  std::string oof = "file,given,fold";
  for (const auto& name : r.classes) oof += "," + csvField("p_" + name);
  oof += "\n";
  for (size_t i = 0; i < r.files.size(); ++i) {
    oof += csvField(r.files[i]) + "," + std::to_string(r.labels[i]) + "," + std::to_string(foldOf[i]);
    for (size_t c = 0; c < k; ++c) oof += "," + number(probs[i * k + c]);
    oof += "\n";
  }
  writeFileAtomically(dir + "/oof.csv", oof);

  std::string issues = "rank,file,given,suggested,self_confidence\n";
  int rank = 0;
  for (const auto& is : r.labelIssues.issues)
    issues += std::to_string(++rank) + "," + csvField(r.files[static_cast<size_t>(is.index)]) + "," +
              csvField(r.classes[static_cast<size_t>(is.given)]) + "," +
              csvField(r.classes[static_cast<size_t>(is.suggested)]) + "," + number(is.selfConfidence) + "\n";
  writeFileAtomically(dir + "/label_issues.csv", issues);

  // A starting point for data.corrections: each suspect relabelled to the
  // model's suggestion, each training copy of a test file removed. The
  // person edits it (keep, another class) and names it in data.corrections.
  if (!isTable(plan)) {
    std::string suggested = "file,action,label\n";
    for (const auto& is : r.labelIssues.issues)
      suggested += csvField(r.files[static_cast<size_t>(is.index)]) + ",relabel," +
                   csvField(r.classes[static_cast<size_t>(is.suggested)]) + "\n";
    for (const auto& d : r.duplicates)
      if (d.kind == "train-test") suggested += csvField(d.first) + ",remove,\n";
    writeFileAtomically(dir + "/suggested_corrections.csv", suggested);
  }

  std::string dups = "kind,first,second,similarity,sha256\n";
  for (const auto& d : r.duplicates)
    dups += d.kind + "," + csvField(d.first) + "," + csvField(d.second) + "," + number(d.similarity) + "," + d.sha256 +
            "\n";
  writeFileAtomically(dir + "/duplicates.csv", dups);

  std::string outliers = "rank,file,label,score\n";
  int place = 0;
  for (const auto& o : r.outliers)
    outliers += std::to_string(++place) + "," + csvField(r.files[static_cast<size_t>(o.index)]) + "," +
                csvField(r.classes[static_cast<size_t>(r.labels[static_cast<size_t>(o.index)])]) + "," +
                number(o.score) + "\n";
  writeFileAtomically(dir + "/outliers.csv", outliers);

  json folds = json::array();
  for (const auto& f : r.folds)
    folds.push_back({{"fold", f.fold}, {"run_dir", f.runDir}, {"accuracy", f.accuracy}, {"examples", f.examples}});
  const json j = {{"folds", folds},
                  {"accuracy", {{"mean", r.meanAccuracy}, {"std", r.stdAccuracy}}},
                  {"examples", r.examples},
                  {"classes", r.classes},
                  {"label_issues", r.labelIssues.issues.size()},
                  {"confident_joint", r.labelIssues.confidentJoint},
                  {"thresholds", r.labelIssues.thresholds},
                  {"duplicates",
                   {{"train_test", r.trainTestDuplicates},
                    {"train_train", r.trainTrainDuplicates},
                    {"near_train_test", r.nearTrainTest},
                    {"near_train_train", r.nearTrainTrain}}},
                  {"feature_note", r.featureNote}};
  writeFileAtomically(dir + "/audit.json", j.dump(2) + "\n");
}

AuditResult continueAudit(const std::string& dir, const TrainConfig& base, AuditState state,
                          const FoldRunner& runFold) {
  AuditResult r;
  r.dir = dir;
  r.options = state.options;
  for (int fold = 1; fold <= state.options.folds; ++fold) {
    AuditFold f;
    f.fold = fold;
    std::string runDir = state.runs.count(fold) ? state.runs[fold] : std::string();
    f.status = runStatus(runDir);
    if (!finished(f.status)) {
      Session session;
      if (!runDir.empty() && fs::is_regular_file(runDir + "/" + run_files::kLastCheckpoint)) {
        log::info("audit: resuming fold " + std::to_string(fold) + " in " + runDir);
        session.resume(runDir);
      } else {
        session.start(foldConfig(base, dir, fold, state.options.folds));
        runDir = session.progress().runDir;
        state.runs[fold] = runDir;
        saveState(dir, state);
        log::info("audit: fold " + std::to_string(fold) + " of " + std::to_string(state.options.folds) + " in " +
                  runDir);
      }
      runFold(session, fold, state.options.folds);
      const RunSummary s = session.summary();
      f.status = s.status;
      if (s.status == "failed") throw Error("audit: fold " + std::to_string(fold) + " failed: " + s.error);
    }
    f.runDir = runDir;
    r.folds.push_back(f);
    if (!finished(f.status)) return r;  // stopped: resume the audit later
  }
  // The data as the audit's settings plan it (no fold): its training
  // examples are what the folds cover; its test split is for the leakage.
  const DataPlan plan = planData(base);
  std::vector<double> probs;
  std::vector<int> foldOf;
  outOfFold(base, plan, dir, state, r, probs, foldOf);
  r.examples = static_cast<int64_t>(r.files.size());
  double sum = 0, sq = 0;
  for (const auto& f : r.folds) sum += f.accuracy;
  r.meanAccuracy = sum / static_cast<double>(r.folds.size());
  for (const auto& f : r.folds) sq += (f.accuracy - r.meanAccuracy) * (f.accuracy - r.meanAccuracy);
  r.stdAccuracy = std::sqrt(sq / static_cast<double>(r.folds.size() - 1));
  r.labelIssues = findLabelIssues(r.labels, probs, static_cast<int64_t>(r.classes.size()));
  exactDuplicates(plan, r);
  featureSearches(plan, state, r);
  writeReport(dir, plan, r, probs, foldOf);
  r.complete = true;
  return r;
}

}  // namespace

AuditResult runAudit(const TrainConfig& config, const AuditOptions& options, const FoldRunner& runFold) {
  checkAuditable(config, options);
  planData(config);  // the data's own problems, named before any folder is made
  std::string dir = config.output.dir + "/" + run_files::folderStamp() + "-audit-" + config.name;
  for (int n = 2; fs::exists(dir); ++n)
    dir = config.output.dir + "/" + run_files::folderStamp() + "-audit-" + config.name + "-" + std::to_string(n);
  fs::create_directories(dir + "/" + kFoldsFolder);
  saveConfigFile(config, dir + "/" + kAuditSettings);
  AuditState state;
  state.options = options;
  saveState(dir, state);
  return continueAudit(dir, config, state, runFold);
}

AuditResult resumeAudit(const std::string& dir, const FoldRunner& runFold) {
  if (!fs::is_regular_file(dir + "/" + kAuditState) || !fs::is_regular_file(dir + "/" + kAuditSettings))
    throw InputError(dir + " is not an audit folder (no " + kAuditState + " and " + kAuditSettings + ")");
  const TrainConfig config = loadConfigFile(dir + "/" + kAuditSettings);
  const AuditState state = loadState(dir);
  checkAuditable(config, state.options);
  return continueAudit(dir, config, state, runFold);
}

}  // namespace studio
