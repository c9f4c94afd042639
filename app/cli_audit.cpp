#include "cli_audit.h"

#include <algorithm>
#include <cstdio>

#include "studio/session.h"

namespace studio::cli {
namespace {

const char* fileOf(const AuditResult& r, int64_t index) { return r.files[static_cast<size_t>(index)].c_str(); }

void printSuspects(const AuditResult& r) {
  if (r.task == TaskKind::regression) {
    std::printf(
        "  suspects: %zu values %g or more standard deviations of the residuals from their out-of-fold "
        "prediction (label_issues.csv; residuals.csv has every one)\n",
        r.residualIssues.issues.size(), r.options.residualZ);
    for (size_t i = 0; i < std::min<size_t>(r.residualIssues.issues.size(), 5); ++i) {
      const ResidualIssue& is = r.residualIssues.issues[i];
      std::printf("    %s: %s %g, predicted %g (%+.1f sd)\n", fileOf(r, is.index),
                  r.targets[static_cast<size_t>(is.target)].c_str(), is.given, is.predicted, is.z);
    }
    return;
  }
  if (r.task == TaskKind::multilabel) {
    std::printf("  label issues: %zu labels of %lld examples (label_issues.csv, lowest self-confidence first)\n",
                r.tagIssues.issues.size(), static_cast<long long>(r.tagIssues.examples));
    for (size_t i = 0; i < std::min<size_t>(r.tagIssues.issues.size(), 5); ++i) {
      const TagIssue& is = r.tagIssues.issues[i];
      std::printf("    %s: %s %s, looks %s (p = %.3f)\n", fileOf(r, is.index),
                  r.targets[static_cast<size_t>(is.label)].c_str(), is.given ? "given" : "not given",
                  is.given ? "absent" : "present", is.selfConfidence);
    }
    return;
  }
  std::printf("  label issues: %zu (label_issues.csv, lowest self-confidence first)\n", r.labelIssues.issues.size());
  for (size_t i = 0; i < std::min<size_t>(r.labelIssues.issues.size(), 5); ++i) {
    const LabelIssue& is = r.labelIssues.issues[i];
    std::printf("    %s: labelled %s, looks like %s (p = %.3f)\n", fileOf(r, is.index),
                r.classes[static_cast<size_t>(is.given)].c_str(), r.classes[static_cast<size_t>(is.suggested)].c_str(),
                is.selfConfidence);
  }
}

}  // namespace

AuditCommand::AuditCommand(CLI::App& app) {
  m_cmd = app.add_subcommand(
      "audit", "Cross-validate a run's settings and list the labels that look wrong and the duplicated files");
  m_settings.addTo(m_cmd);
  m_cmd->add_option("--folds", m_options.folds, "Cross-validation folds, 2 to 20 (default 5)");
  m_cmd->add_option("--similarity", m_options.similarity,
                    "Near-duplicates: pairs whose penultimate features have at least this cosine similarity "
                    "(default 0.99)");
  m_cmd->add_option("--neighbours", m_options.neighbours,
                    "Outliers: the mean distance to this many nearest neighbours of the same class (default 10)");
  m_cmd->add_option("--residual-z", m_options.residualZ,
                    "Regression: a suspect's out-of-fold residual, in standard deviations of the residuals "
                    "(default 3)");
  m_parallel = m_cmd->add_option("--parallel", m_options.parallel,
                                 "Folds at once, each in its own process: the CPU's cores shared, or a GPU each "
                                 "(default 1: one after another)");
  m_cmd->add_option("--out", m_out, "Folder for the audit's folder (output.dir)")->check(kNamesSomething);
  auto* resume =
      m_cmd->add_option("--resume", m_resume, "Continue a stopped audit in its folder")->check(kNamesSomething);
  resume->excludes(m_settings.preset)->excludes(m_settings.config);
}

int AuditCommand::run(const std::function<int(Session&)>& runSession, const ParallelStops& stops) {
  const FoldRunner runFold = [&](Session& session, int fold, int folds) {
    std::fprintf(stderr, "audit: fold %d of %d\n", fold, folds);
    return runSession(session);
  };
  AuditResult r;
  if (!m_resume.empty()) {
    r = resumeAudit(m_resume, runFold, m_parallel->count() ? m_options.parallel : 0, stops);
  } else {
    TrainConfig config = m_settings.load();
    if (!m_out.empty()) config.output.dir = m_out;
    r = runAudit(config, m_options, runFold, stops);
  }
  if (!r.complete) {
    std::fprintf(stderr, "audit stopped; `training-studio-cli audit --resume %s` continues it\n", r.dir.c_str());
    return 130;
  }
  std::printf("audit %s\n", r.dir.c_str());
  const char* metric = r.metric == "r2" ? "R2" : r.metric == "label_accuracy" ? "label accuracy" : "accuracy";
  std::printf("  cross-validated %s %.4f +- %.4f over %zu folds (%lld training examples)\n", metric, r.meanScore,
              r.stdScore, r.folds.size(), static_cast<long long>(r.examples));
  printSuspects(r);
  if (r.trainTestDuplicates > 0)
    std::printf(
        "  LEAKAGE: %lld test file(s) are exact copies of training files (duplicates.csv): the test "
        "figures are not of unseen data\n",
        static_cast<long long>(r.trainTestDuplicates));
  else
    std::printf("  no test file is a copy of a training file\n");
  std::printf("  exact duplicates within the training set: %lld\n", static_cast<long long>(r.trainTrainDuplicates));
  if (r.outliers.empty()) {  // no features: a TorchScript model
    std::printf("  note: %s\n", r.featureNote.c_str());
    return 0;
  }
  std::printf("  near-duplicates (feature similarity >= %g): %lld between training and test%s, %lld within training\n",
              r.options.similarity, static_cast<long long>(r.nearTrainTest),
              r.nearTrainTest > 0 && r.featureNote.empty() ? " (possible leakage, or only alike: look at them)" : "",
              static_cast<long long>(r.nearTrainTrain));
  std::fputs(r.classes.empty() ? "  least like the others (outliers.csv):" : "  least like their class (outliers.csv):",
             stdout);
  for (size_t i = 0; i < std::min<size_t>(r.outliers.size(), 3); ++i)
    std::printf(" %s (%.3f)", r.files[static_cast<size_t>(r.outliers[i].index)].c_str(), r.outliers[i].score);
  std::printf("\n");
  if (!r.featureNote.empty()) std::printf("  warning: %s\n", r.featureNote.c_str());
  return 0;
}

}  // namespace studio::cli
