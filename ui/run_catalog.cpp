#include "ui/run_catalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

namespace studio::ui {
namespace {

nlohmann::json readJson(const QString& path) {
  std::ifstream in(path.toStdString());
  if (!in) return {};
  return nlohmann::json::parse(in, nullptr, false);  // a broken file reads as "discarded"
}

double numberOr(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : MetricRecord::kNone;
}

}  // namespace

RunInfo readRunInfo(const QString& runDir) {
  RunInfo r;
  QFileInfo dirInfo(runDir);
  r.dir = dirInfo.absoluteFilePath();
  r.folderName = dirInfo.fileName();
  r.started = QDateTime::fromString(r.folderName.left(15), "yyyyMMdd-HHmmss");
  if (!r.started.isValid()) r.started = dirInfo.birthTime().isValid() ? dirInfo.birthTime() : dirInfo.lastModified();
  const nlohmann::json settings = readJson(runDir + "/settings.json");
  if (settings.is_object()) {
    r.name = QString::fromStdString(settings.value("name", std::string()));
    if (settings.contains("model") && settings["model"].is_object()) {
      const auto& m = settings["model"];
      r.model = QString("%1 w%2 d%3")
                    .arg(QString::fromStdString(m.value("kind", std::string("?"))))
                    .arg(m.value("width", 0))
                    .arg(m.value("depth", 0));
    }
    if (settings.contains("run_info") && settings["run_info"].is_object()) {
      const auto& info = settings["run_info"];
      if (info.contains("device") && info["device"].is_string())
        r.device = QString::fromStdString(info["device"].get<std::string>());
      if (info.contains("total_steps") && info["total_steps"].is_number_integer())
        r.totalSteps = info["total_steps"].get<qint64>();
      // "TorchScript net.ts", as the engine describes the model it built.
      if (info.contains("model") && info["model"].is_string())
        r.model = QString::fromStdString(info["model"].get<std::string>());
    }
  }
  const nlohmann::json summary = readJson(runDir + "/summary.json");
  if (summary.is_object()) {
    r.status = QString::fromStdString(summary.value("status", std::string("?")));
    r.error = QString::fromStdString(summary.value("error", std::string()));
    r.bestAccuracy = numberOr(summary, "best_eval_accuracy");
    r.testAccuracy = numberOr(summary, "test_accuracy");
    r.steps = summary.value("steps", qint64{0});
    r.totalSteps = summary.value("total_steps", r.totalSteps);
    if (summary.contains("device") && summary["device"].is_string())
      r.device = QString::fromStdString(summary["device"].get<std::string>());
  } else {
    // No summary: still training, or ended without one (killed, power cut).
    r.status = "interrupted";
  }
  r.resumable = QFile::exists(runDir + "/checkpoints/last.ckpt") && r.status != "completed";
  return r;
}

std::vector<RunInfo> listRuns(const QString& runsDir) {
  std::vector<RunInfo> runs;
  const QDir dir(runsDir);
  for (const QFileInfo& sub : dir.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    if (!QFile::exists(sub.absoluteFilePath() + "/settings.json")) continue;
    runs.push_back(readRunInfo(sub.absoluteFilePath()));
  }
  std::sort(runs.begin(), runs.end(), [](const RunInfo& a, const RunInfo& b) {
    return a.started != b.started ? a.started > b.started : a.folderName > b.folderName;
  });
  return runs;
}

bool readRunMetrics(const QString& runDir, std::vector<MetricRecord>& out, QString* error) {
  const QString path = runDir + "/metrics.csv";
  std::ifstream in(path.toStdString());
  if (!in) {
    if (error) *error = QStringLiteral("cannot open %1").arg(path);
    return false;
  }
  std::string line;
  if (!std::getline(in, line) || line != metricsCsvHeader()) {
    if (error) *error = QStringLiteral("%1 does not start with the metrics header").arg(path);
    return false;
  }
  int lineNo = 1;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) continue;
    MetricRecord r;
    if (!parseMetricsCsvRow(line, r)) {
      // A run killed mid-write can leave a torn last line; everything before it stands.
      if (error) *error = QStringLiteral("%1 line %2 is not a metrics row").arg(path).arg(lineNo);
      return false;
    }
    out.push_back(r);
  }
  return true;
}

}  // namespace studio::ui
