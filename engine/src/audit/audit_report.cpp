#include "audit/audit_report.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "studio/csv_table.h"
#include "studio/file_io.h"

namespace studio {
namespace {

using json = nlohmann::json;

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // exact: a reader gets the same double back
  return buf;
}

const std::string& fileOf(const AuditResult& r, int64_t index) { return r.files.at(static_cast<size_t>(index)); }

// An example's nearest other example and their similarity, as two cells
// (empty without feature searches).
std::string nearestCells(const AuditResult& r, int64_t index) {
  if (r.nearest.empty()) return ",";
  return csvField(r.nearest.at(static_cast<size_t>(index))) + "," +
         number(r.nearestSimilarity.at(static_cast<size_t>(index)));
}

void writeOutOfFold(const std::string& dir, const AuditResult& r, const std::vector<double>& outputs,
                    const std::vector<int>& foldOf) {
  const bool targets = !r.targets.empty();
  const size_t k = targets ? r.targets.size() : r.classes.size();
  std::string oof = targets ? "file,fold" : "file,given,fold";
  if (targets)
    for (const auto& name : r.targets) oof += "," + csvField("given_" + name);
  for (const auto& name : targets ? r.targets : r.classes)
    oof += "," + csvField((r.task == TaskKind::regression ? "pred_" : "p_") + name);
  oof += "\n";
  for (size_t i = 0; i < r.files.size(); ++i) {
    oof += csvField(r.files[i]) + (targets ? "" : "," + std::to_string(r.labels[i])) + "," + std::to_string(foldOf[i]);
    if (targets)
      for (size_t c = 0; c < k; ++c) oof += "," + number(r.given[i * k + c]);
    for (size_t c = 0; c < k; ++c) oof += "," + number(outputs[i * k + c]);
    oof += "\n";
  }
  writeFileAtomically(dir + "/oof.csv", oof);
}

// label_issues.csv and suggested_corrections.csv: the suspects, and a
// starting point for data.corrections (each suspect relabelled to the
// model's suggestion, or removed where there are no classes to relabel to;
// each training copy of a test file removed). The person edits it (keep,
// another class) and names it in data.corrections.
void writeSuspects(const std::string& dir, const AuditResult& r) {
  std::string issues, suggested = "file,action,label\n";
  int rank = 0;
  if (r.task == TaskKind::regression) {
    issues = "rank,file,target,given,suggested,residual_z,nearest,nearest_similarity\n";
    for (const auto& is : r.residualIssues.issues) {
      issues += std::to_string(++rank) + "," + csvField(fileOf(r, is.index)) + "," +
                csvField(r.targets[static_cast<size_t>(is.target)]) + "," + number(is.given) + "," +
                number(is.predicted) + "," + number(is.z) + "," + nearestCells(r, is.index) + "\n";
      suggested += csvField(fileOf(r, is.index)) + ",remove,\n";
    }
  } else if (r.task == TaskKind::multilabel) {
    issues = "rank,file,label,given,suggested,self_confidence,nearest,nearest_similarity\n";
    for (const auto& is : r.tagIssues.issues) {
      issues += std::to_string(++rank) + "," + csvField(fileOf(r, is.index)) + "," +
                csvField(r.targets[static_cast<size_t>(is.label)]) + "," + std::to_string(is.given) + "," +
                std::to_string(1 - is.given) + "," + number(is.selfConfidence) + "," + nearestCells(r, is.index) + "\n";
      suggested += csvField(fileOf(r, is.index)) + ",remove,\n";
    }
  } else {
    issues = "rank,file,given,suggested,self_confidence,nearest,nearest_similarity\n";
    for (const auto& is : r.labelIssues.issues) {
      issues += std::to_string(++rank) + "," + csvField(fileOf(r, is.index)) + "," +
                csvField(r.classes[static_cast<size_t>(is.given)]) + "," +
                csvField(r.classes[static_cast<size_t>(is.suggested)]) + "," + number(is.selfConfidence) + "," +
                nearestCells(r, is.index) + "\n";
      suggested +=
          csvField(fileOf(r, is.index)) + ",relabel," + csvField(r.classes[static_cast<size_t>(is.suggested)]) + "\n";
    }
  }
  writeFileAtomically(dir + "/label_issues.csv", issues);
  for (const auto& d : r.duplicates)
    if (d.kind == "train-test") suggested += csvField(d.first) + ",remove,\n";
  writeFileAtomically(dir + "/suggested_corrections.csv", suggested);
}

// residuals.csv: every example's residual of every target, as it was found.
void writeResiduals(const std::string& dir, const AuditResult& r, const std::vector<double>& outputs) {
  const size_t T = r.targets.size();
  std::string text = "file,target,given,predicted,residual,residual_z\n";
  for (size_t i = 0; i < r.files.size(); ++i)
    for (size_t t = 0; t < T; ++t) {
      const double residual = r.given[i * T + t] - outputs[i * T + t];
      const double spread = r.residualIssues.spread[t];
      text += csvField(r.files[i]) + "," + csvField(r.targets[t]) + "," + number(r.given[i * T + t]) + "," +
              number(outputs[i * T + t]) + "," + number(residual) + "," + number(spread > 0 ? residual / spread : 0.0) +
              "\n";
    }
  writeFileAtomically(dir + "/residuals.csv", text);
}

json issuesJson(const AuditResult& r) {
  if (r.task == TaskKind::regression)
    return {{"suspects", r.residualIssues.issues.size()},
            {"residual_z", r.options.residualZ},
            {"residual_spread", r.residualIssues.spread}};
  if (r.task == TaskKind::multilabel) {
    json perLabel = json::object();
    for (size_t l = 0; l < r.targets.size(); ++l)
      perLabel[r.targets[l]] = {{"issues", r.tagIssues.perLabel[l].issues.size()},
                                {"confident_joint", r.tagIssues.perLabel[l].confidentJoint},
                                {"thresholds", r.tagIssues.perLabel[l].thresholds}};
    return {{"label_issues", r.tagIssues.issues.size()},
            {"examples_with_issues", r.tagIssues.examples},
            {"per_label", perLabel}};
  }
  return {{"label_issues", r.labelIssues.issues.size()},
          {"confident_joint", r.labelIssues.confidentJoint},
          {"thresholds", r.labelIssues.thresholds}};
}

}  // namespace

void writeAuditReport(const std::string& dir, const AuditResult& r, const std::vector<double>& outputs,
                      const std::vector<int>& foldOf) {
  writeOutOfFold(dir, r, outputs, foldOf);
  writeSuspects(dir, r);
  if (r.task == TaskKind::regression) writeResiduals(dir, r, outputs);

  std::string dups = "kind,first,second,similarity,sha256\n";
  for (const auto& d : r.duplicates)
    dups += d.kind + "," + csvField(d.first) + "," + csvField(d.second) + "," + number(d.similarity) + "," + d.sha256 +
            "\n";
  writeFileAtomically(dir + "/duplicates.csv", dups);

  std::string outliers = "rank,file,label,score,nearest,nearest_similarity\n";
  int place = 0;
  for (const auto& o : r.outliers)
    outliers +=
        std::to_string(++place) + "," + csvField(fileOf(r, o.index)) + "," +
        csvField(r.classes.empty() ? "" : r.classes[static_cast<size_t>(r.labels[static_cast<size_t>(o.index)])]) +
        "," + number(o.score) + "," + nearestCells(r, o.index) + "\n";
  writeFileAtomically(dir + "/outliers.csv", outliers);

  json folds = json::array();
  for (const auto& f : r.folds)
    folds.push_back({{"fold", f.fold}, {"run_dir", f.runDir}, {r.metric, f.score}, {"examples", f.examples}});
  json j = {{"task", r.task},
            {"metric", r.metric},
            {"folds", folds},
            {r.metric, {{"mean", r.meanScore}, {"std", r.stdScore}}},
            {"examples", r.examples},
            {"classes", r.classes},
            {"targets", r.targets},
            {"duplicates",
             {{"train_test", r.trainTestDuplicates},
              {"train_train", r.trainTrainDuplicates},
              {"near_train_test", r.nearTrainTest},
              {"near_train_train", r.nearTrainTrain}}},
            {"feature_note", r.featureNote}};
  j.update(issuesJson(r));
  writeFileAtomically(dir + "/audit.json", j.dump(2) + "\n");
}

}  // namespace studio
