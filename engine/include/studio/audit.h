#pragma once
// The data audit (training-studio-cli audit): K-fold cross-validation with a
// run's settings, each fold an ordinary run folder under the audit's folder
// (data.cv_folds / data.cv_fold), then every training example's
// out-of-fold probabilities, the examples whose labels look wrong by
// confident learning (studio/label_issues.h), the files that are exact or
// near copies of each other, within the training set and, separately,
// between the training and the test sets, and the outliers of each class.
// The feature space of the near copies and outliers is fold 1's model's
// penultimate features.
//
// An audit folder, <output.dir>/<YYYYmmdd-HHMMSS>-audit-<name>/:
//   audit_settings.json  the run's settings and the number of folds
//   folds/               the folds' run folders (resumable as any run)
//   audit_state.json     which run folder is which fold
//   oof.csv              file, given label, fold, one probability per class
//                        (regression: given_<t> and pred_<t> per target;
//                        multi-label: given_<l> and p_<l> per label)
//   label_issues.csv     the suspects, lowest self-confidence first
//                        (regression: largest residual first)
//   duplicates.csv       exact duplicates (train-test first), then near ones
//   outliers.csv         every training file, least like its class first
//   suggested_corrections.csv  data.corrections' format: each suspect
//                        relabelled to the suggestion, each training copy of
//                        a test file removed; edit it, then name it in
//                        data.corrections
//   audit.json           the folds' figures, their mean and spread, counts
// Image folders and tables (data.format image_folder or csv) of every
// task.kind: classes by confident learning; a regression by its out-of-fold
// residuals (residuals.csv lists every example's, label_issues.csv the
// suspects); a multi-label one by confident learning label by label
// (studio/target_issues.h). idx data is refused by name. A table's rows are
// named "file row N", compared by their feature values, and its near pairs
// and outliers are in its standardised columns. Without classes the
// outliers are the examples least like all the others.
// Torch-free. Thread: one thread (it runs the folds' sessions).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "studio/label_issues.h"
#include "studio/run_summary.h"
#include "studio/target_issues.h"
#include "studio/train_config.h"

namespace studio {

class Session;

struct AuditFold {
  int fold = 0;  // 1..K
  std::string runDir;
  std::optional<RunStatus> status;  // the run's
  double score = 0;                 // on its held-out fold: AuditResult::metric
  int64_t examples = 0;             // held out
};

struct DuplicatePair {
  // "train-test" or "train-train": the same bytes; "near train-test" or
  // "near train-train": not the same bytes, but penultimate features whose
  // cosine similarity reaches AuditOptions::similarity.
  std::string kind;
  std::string first, second, sha256;  // sha256: the exact pairs'
  double similarity = 1;
};

struct Outlier {
  int64_t index = 0;  // of AuditResult::files
  double score = 0;   // mean cosine distance to its nearest neighbours of its class
};

struct AuditOptions {
  int folds = 5;
  double similarity = 0.99;  // near-duplicates: this cosine similarity of the features or more
  int neighbours = 10;       // outliers: the k of the k nearest neighbours
  double residualZ = 3;      // regression: a suspect's residual, in standard deviations of the residuals
  // Folds at once (--parallel), each a training process of the CLI
  // (AuditOptions::cli): on the CPU the cores are shared out
  // (performance.threads), on several GPUs each fold has one, on one GPU they
  // share it. 1: one fold after another, in this process (runFold).
  int parallel = 1;
  std::string cli;  // the training-studio-cli that runs the folds at once
};

struct AuditResult {
  std::string dir;
  AuditOptions options;
  std::vector<AuditFold> folds;
  // The folds' figure: "accuracy" (classes), "r2" (regression: R², the
  // targets' mean), "label_accuracy" (multi-label: the share of labels right
  // at the run's thresholds).
  std::string metric = "accuracy";
  double meanScore = 0, stdScore = 0;                // over the folds (sample standard deviation)
  int64_t examples = 0;                              // training examples with out-of-fold outputs
  Choice<TaskKind> task = TaskKind::classification;  // task.kind
  std::vector<std::string> classes;
  LabelIssues labelIssues;
  // Regression and multi-label: the targets (labels), every example's given
  // values (n x targets; multi-label 0 or 1) and the suspects.
  std::vector<std::string> targets;
  std::vector<double> given;
  ResidualIssues residualIssues;
  TagIssues tagIssues;
  std::vector<std::string> files;  // the audited training files (labelIssues' indices)
  std::vector<int64_t> labels;
  std::vector<DuplicatePair> duplicates;
  int64_t trainTestDuplicates = 0, trainTrainDuplicates = 0;
  int64_t nearTrainTest = 0, nearTrainTrain = 0;
  // Every training file, least like its class first; empty when the model's
  // layers are unknown (TorchScript), as are the near-duplicates then.
  std::vector<Outlier> outliers;
  // Each training file's nearest other example in the feature space (a
  // training or test file) and their cosine similarity; empty with the
  // outliers.
  std::vector<std::string> nearest;
  std::vector<double> nearestSimilarity;
  // Why there are no feature searches (TorchScript), or why they say little
  // (more near pairs than images: a model that does not tell them apart).
  std::string featureNote;
  bool complete = false;  // false: a fold did not finish (stopped); resume the audit
};

// Folds at once (AuditOptions::parallel above 1) run in processes of their
// own: `requested` is polled while they run, and a stop it reports is passed
// on to them (each saves a checkpoint). `ended` is called once the folds have
// all ended, at once or one after another (the caller's own stop handling
// resumes for the audit's own work).
struct ParallelStops {
  std::function<bool()> requested;
  std::function<void()> ended;
};

// Runs one fold's session to its end: the CLI's progress and Ctrl-C
// handling. Returns the run's exit status (0: it ended; else it stopped or failed).
using FoldRunner = std::function<int(Session& session, int fold, int folds)>;

// Starts an audit of config's data under config.output.dir.
// Throws InputError (settings, data that the audit cannot read yet).
// With options.parallel above 1 the folds run at once in processes of the CLI
// (runFold is not called; ParallelStops says how they are stopped).
AuditResult runAudit(const TrainConfig& config, const AuditOptions& options, const FoldRunner& runFold,
                     const ParallelStops& stops = {});
// Continues the audit in dir: finished folds are kept, a stopped one is
// resumed from its checkpoint, the others are started.
// parallel: folds at once from here on (0: as the audit was started).
AuditResult resumeAudit(const std::string& dir, const FoldRunner& runFold, int parallel = 0,
                        const ParallelStops& stops = {});

}  // namespace studio
