#include "cli_audit.h"

#include <algorithm>
#include <cstdio>

#include "studio/session.h"

namespace studio::cli {

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
  m_cmd->add_option("--out", m_out, "Folder for the audit's folder (output.dir)")->check(kNamesSomething);
  auto* resume =
      m_cmd->add_option("--resume", m_resume, "Continue a stopped audit in its folder")->check(kNamesSomething);
  resume->excludes(m_settings.preset)->excludes(m_settings.config);
}

int AuditCommand::run(const std::function<int(Session&)>& runSession) {
  const FoldRunner runFold = [&](Session& session, int fold, int folds) {
    std::fprintf(stderr, "audit: fold %d of %d\n", fold, folds);
    return runSession(session);
  };
  AuditResult r;
  if (!m_resume.empty()) {
    r = resumeAudit(m_resume, runFold);
  } else {
    TrainConfig config = m_settings.load();
    if (!m_out.empty()) config.output.dir = m_out;
    r = runAudit(config, m_options, runFold);
  }
  if (!r.complete) {
    std::fprintf(stderr, "audit stopped; `training-studio-cli audit --resume %s` continues it\n", r.dir.c_str());
    return 130;
  }
  std::printf("audit %s\n", r.dir.c_str());
  std::printf("  cross-validated accuracy %.4f +- %.4f over %zu folds (%lld training examples)\n", r.meanAccuracy,
              r.stdAccuracy, r.folds.size(), static_cast<long long>(r.examples));
  std::printf("  label issues: %zu (label_issues.csv, lowest self-confidence first)\n", r.labelIssues.issues.size());
  for (size_t i = 0; i < std::min<size_t>(r.labelIssues.issues.size(), 5); ++i) {
    const LabelIssue& is = r.labelIssues.issues[i];
    std::printf("    %s: labelled %s, looks like %s (p = %.3f)\n", r.files[static_cast<size_t>(is.index)].c_str(),
                r.classes[static_cast<size_t>(is.given)].c_str(), r.classes[static_cast<size_t>(is.suggested)].c_str(),
                is.selfConfidence);
  }
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
              r.nearTrainTest > 0 ? " (LEAKAGE, likely)" : "", static_cast<long long>(r.nearTrainTrain));
  std::printf("  least like their class (outliers.csv):");
  for (size_t i = 0; i < std::min<size_t>(r.outliers.size(), 3); ++i)
    std::printf(" %s (%.3f)", r.files[static_cast<size_t>(r.outliers[i].index)].c_str(), r.outliers[i].score);
  std::printf("\n");
  if (!r.featureNote.empty()) std::printf("  warning: %s\n", r.featureNote.c_str());
  return 0;
}

}  // namespace studio::cli
