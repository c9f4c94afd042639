#include "ui/runs/run_catalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"
#include "studio/lr_schedule.h"
#include "studio/metric_catalog.h"
#include "studio/model_kinds.h"
#include "studio/run_layout.h"
#include "studio/train_config.h"

namespace studio::ui {
namespace {

nlohmann::json readJson(const QString& path) {
  std::ifstream in(path.toStdString());
  if (!in) return {};
  return nlohmann::json::parse(in, nullptr, false);  // a broken file reads as "discarded"
}

// Readers that never throw: a field of the wrong type reads as missing (a run
// folder edited by hand must not end the window).
QString textOr(const nlohmann::json& j, const char* key, const QString& fallback) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>())
                                                                : fallback;
}

qint64 wholeOr(const nlohmann::json& j, const char* key, qint64 fallback) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<qint64>() : fallback;
}

void flatten(const nlohmann::json& j, const QString& prefix, QMap<QString, QString>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const QString key =
        prefix.isEmpty() ? QString::fromStdString(it.key()) : prefix + "." + QString::fromStdString(it.key());
    if (it.value().is_object())
      flatten(it.value(), key, out);
    else if (it.value().is_string())
      out[key] = QString::fromStdString(it.value().get<std::string>());
    else
      out[key] = QString::fromStdString(it.value().dump());
  }
}

}  // namespace

QStringList differingSettings(const std::vector<QMap<QString, QString>>& settings) {
  QSet<QString> keys;
  for (const auto& s : settings)
    for (auto it = s.begin(); it != s.end(); ++it) keys.insert(it.key());
  QStringList differing;
  for (const QString& key : keys) {
    if (key == "name" || key == "output.dir") continue;
    for (const auto& s : settings)
      if (s.value(key) != settings.front().value(key)) {
        differing << key;
        break;
      }
  }
  differing.sort();
  return differing;
}

QStringList differingSettings(const std::vector<RunInfo>& runs) {
  std::vector<QMap<QString, QString>> settings;
  for (const RunInfo& r : runs) settings.push_back(r.settings);
  return differingSettings(settings);
}

QMap<QString, QString> settingsText(const TrainConfig& config) {
  QMap<QString, QString> out;
  flatten(toJson(config), QString(), out);
  return out;
}

bool writeRunNotes(const QString& runDir, const QString& title, const QStringList& tags, const QString& notes,
                   QString* error) {
  nlohmann::json j;
  j["title"] = title.trimmed().toStdString();
  j["tags"] = nlohmann::json::array();
  for (const QString& t : tags)
    if (!t.trimmed().isEmpty()) j["tags"].push_back(t.trimmed().toStdString());
  j["notes"] = notes.toStdString();
  try {
    requireRealDirectory(runDir.toStdString());
    writeFileAtomically((runDir + "/notes.json").toStdString(), j.dump(2) + "\n");
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

namespace {

// The step of metrics.csv's last row (its second column), read from the
// file's end; 0 when there is none.
qint64 lastRecordedStep(const QString& runDir) {
  QFile f(runDir + "/" + run_files::kMetrics);
  if (!f.open(QIODevice::ReadOnly)) return 0;
  const qint64 tail = 16384;
  if (f.size() > tail) f.seek(f.size() - tail);
  const QList<QByteArray> lines = f.readAll().split('\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const QList<QByteArray> cells = it->split(',');
    bool ok = false;
    const qint64 step = cells.size() > 2 ? cells[1].toLongLong(&ok) : 0;
    if (ok) return step;
  }
  return 0;
}

}  // namespace

RunInfo readRunInfo(const QString& runDir) {
  RunInfo r;
  QFileInfo dirInfo(runDir);
  r.dir = dirInfo.absoluteFilePath();
  r.folderName = dirInfo.fileName();
  r.started = QDateTime::fromString(r.folderName.left(15), "yyyyMMdd-HHmmss");
  if (!r.started.isValid()) r.started = dirInfo.birthTime().isValid() ? dirInfo.birthTime() : dirInfo.lastModified();
  const nlohmann::json settings = readJson(runDir + "/" + run_files::kSettings);
  if (settings.is_object()) {
    nlohmann::json chosen = settings;
    chosen.erase("run_info");
    flatten(chosen, QString(), r.settings);
    r.name = textOr(settings, "name", QString());
    if (settings.contains("model") && settings["model"].is_object()) {
      const auto& m = settings["model"];
      r.model =
          modelText(textOr(m, "kind", "?"), wholeOr(m, "width", 0), wholeOr(m, "depth", 0), textOr(m, "path", ""));
    }
    if (settings.contains("run_info") && settings["run_info"].is_object()) {
      const auto& info = settings["run_info"];
      r.device = textOr(info, "device", r.device);
      r.probe = textOr(info, "probe", QString());
      r.totalSteps = wholeOr(info, "total_steps", r.totalSteps);
      // "TorchScript net.ts", as the engine describes the model it built.
      r.model = textOr(info, "model", r.model);
      if (info.contains("parent") && info["parent"].is_object()) {
        const auto& parent = info["parent"];
        r.parentDir = textOr(parent, "run", QString());
        r.parentStep = wholeOr(parent, "step", 0);
        if (parent.contains("changed") && parent["changed"].is_object())
          for (auto it = parent["changed"].begin(); it != parent["changed"].end(); ++it) {
            const auto& v = it.value();
            if (v.is_array() && v.size() == 2)
              r.changed << QString("%1 %2 → %3")
                               .arg(QString::fromStdString(it.key()), QString::fromStdString(v[0].dump()),
                                    QString::fromStdString(v[1].dump()));
          }
      }
      if (info.contains("continued") && info["continued"].is_array())
        r.continuations = static_cast<int>(info["continued"].size());
      const QString task = r.settings.value("task.kind");
      const bool labelsFile = (task == "classification" && !r.settings.value("data.targets_file").isEmpty()) ||
                              (task == "detection" && !r.settings.value("data.annotations").isEmpty());
      if (labelsFile && info.contains("data") && info["data"].is_object())
        r.labels = wholeOr(info["data"], "train", 0) + wholeOr(info["data"], "validation", 0) +
                   wholeOr(info["data"], "test", 0);
    }
    // The run's epochs and samples, as the engine planned them.
    if (settings.contains("train") && settings["train"].is_object()) {
      TrainConfig c;
      c.train.batch_size = static_cast<int>(wholeOr(settings["train"], "batch_size", 0));
      c.train.accumulation_steps = static_cast<int>(wholeOr(settings["train"], "accumulation_steps", 1));
      c.train.max_steps = 0;
      c.train.epochs = 1;
      const nlohmann::json info = settings.contains("run_info") ? settings["run_info"] : nlohmann::json::object();
      const qint64 world = std::max<qint64>(1, wholeOr(info, "world_size", 1));
      const qint64 examples = wholeOr(info, "train_examples", 0);
      if (c.train.batch_size > 0 && c.train.accumulation_steps > 0) {
        r.samplesPerStep =
            static_cast<double>(c.train.batch_size) * c.train.accumulation_steps * static_cast<double>(world);
        if (examples > 0)
          r.stepsPerEpoch = static_cast<double>(planSteps(c, (examples + world - 1) / world).stepsPerEpoch);
      }
    }
  }
  const SummaryFile summary = readSummaryFile(runDir.toStdString());
  if (summary.read()) {
    const RunSummary& s = summary.summary;
    r.ended = s.status;
    r.status = s.status ? QString::fromStdString(nameOf(*s.status)) : QStringLiteral("?");
    r.error = QString::fromStdString(s.error);
    r.best = s.bestEval;
    r.test = s.test.figures;
    r.lastTest = s.test.last;
    r.testWeights = QString::fromStdString(s.test.weights);
    r.testWeightsStep = s.test.weightsStep;
    r.steps = s.steps;
    if (s.totalSteps > 0) r.totalSteps = s.totalSteps;
    if (!s.device.empty()) r.device = QString::fromStdString(s.device);
  } else if (summary.state == SummaryFile::State::Unreadable) {
    r.status = "unreadable";
    r.error = QStringLiteral("%1/summary.json is not valid JSON").arg(runDir);
  } else if (const long pid = lockHolder(runDir.toStdString() + "/.lock"); pid >= 0) {
    // No summary and its lock held: another process (a second window, the
    // CLI, a search's trial) is training it now; resuming it here would
    // train it twice (issue 60, item 10).
    r.status = "training elsewhere";
    r.error = pid > 0 ? QStringLiteral("process %1 is training this run now").arg(pid)
                      : QStringLiteral("another process is training this run now");
    r.steps = lastRecordedStep(runDir);
  } else {
    // No summary: ended without one (killed, power cut); its steps are
    // metrics.csv's, not 0.
    r.status = "interrupted";
    r.steps = lastRecordedStep(runDir);
  }
  if (!settings.is_object()) {
    r.status = "unreadable";
    r.error = QStringLiteral("%1/settings.json is not valid JSON settings").arg(runDir);
  }
  const nlohmann::json notes = readJson(runDir + "/notes.json");
  if (notes.is_object()) {
    r.title = textOr(notes, "title", QString());
    r.notes = textOr(notes, "notes", QString());
    if (notes.contains("tags") && notes["tags"].is_array())
      for (const auto& t : notes["tags"])
        if (t.is_string()) r.tags << QString::fromStdString(t.get<std::string>());
  }
  const nlohmann::json trial = readJson(runDir + "/trial.json");
  if (trial.is_object() && trial.contains("trial") && trial["trial"].is_number_integer()) {
    r.trial = QStringLiteral("study %1, trial %2").arg(textOr(trial, "study", "?")).arg(trial["trial"].get<int64_t>());
    r.pruned = textOr(trial, "state", QString()) == "pruned";
  }
  r.hasCheckpoint = QFile::exists(runDir + "/checkpoints/last.ckpt");
  // An interrupted run without a checkpoint yet (killed in its first steps)
  // resumes from step 0 in its folder; a fork so killed is forked again.
  const bool fromStart = !r.hasCheckpoint && r.status == "interrupted" && r.parentDir.isEmpty();
  r.resumable = (r.hasCheckpoint || fromStart) && !finishedStatus(r.ended) && r.status != "training elsewhere";
  return r;
}

QString modelText(const QString& kind, qint64 width, qint64 depth, const QString& path) {
  if (isModel(kind.toStdString(), ModelFamily::torchscript))
    return QStringLiteral("TorchScript %1").arg(QFileInfo(path).fileName());
  // A torchvision backbone has its own shape: model.width and depth are the built-ins'.
  if (isTorchvisionBackbone(kind.toStdString())) return kind;
  return QStringLiteral("%1 w%2 d%3").arg(kind).arg(width).arg(depth);
}

namespace {
// The figure the run is judged by: its best evaluation's, else accuracy.
std::string scoreOf(const RunInfo& run) {
  return run.best.empty() ? "eval_accuracy" : run.best.values().begin()->first;
}
// "91.20 %" for an accuracy ("accuracy 91.20 %" named), "R² 0.8123" (the
// catalog's unit) for others.
QString scoreText(const std::string& id, double value, bool named = false) {
  if (id == "eval_accuracy")
    return (named ? QObject::tr("accuracy ") : QString()) + QString::number(value * 100, 'f', 2) + " %";
  return QStringLiteral("%1 %2").arg(QString::fromUtf8(findMetric(id)->unit)).arg(value, 0, 'f', 4);
}
}  // namespace

QString bestText(const RunInfo& run, bool named) {
  return run.best.empty() ? QString() : scoreText(scoreOf(run), run.best[scoreOf(run)], named);
}

QString testFiguresText(const RunInfo& run) {
  const std::string id = scoreOf(run);
  if (!run.test.has(id)) return QString();
  const QString weights = run.testWeights == "best"
                              ? QObject::tr("the best checkpoint's weights (step %1)").arg(run.testWeightsStep)
                              : QObject::tr("the last weights (step %1)").arg(run.testWeightsStep);
  QString text = QObject::tr("test %1 with %2").arg(scoreText(id, run.test[id], true), weights);
  if (run.lastTest.has(id)) text += QObject::tr("; the last weights: %1").arg(scoreText(id, run.lastTest[id]));
  return text;
}

std::vector<RunInfo> listRuns(const QString& runsDir) {
  std::vector<RunInfo> runs;
  const QDir dir(runsDir);
  for (const QFileInfo& sub : dir.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    if (!QFile::exists(sub.absoluteFilePath() + "/" + run_files::kSettings)) continue;
    runs.push_back(readRunInfo(sub.absoluteFilePath()));
  }
  std::sort(runs.begin(), runs.end(), [](const RunInfo& a, const RunInfo& b) {
    return a.started != b.started ? a.started > b.started : a.folderName > b.folderName;
  });
  return runs;
}

bool readRunMetrics(const QString& runDir, std::vector<MetricRecord>& out, QString* error) {
  const QString path = runDir + "/" + run_files::kMetrics;
  std::ifstream in(path.toStdString());
  if (!in) {
    if (error) *error = QStringLiteral("cannot open %1").arg(path);
    return false;
  }
  std::string line;
  std::optional<MetricsCsvColumns> columns;
  if (!std::getline(in, line) || !(columns = metricsCsvColumns(line))) {
    if (error) *error = QStringLiteral("%1 does not start with the metrics header").arg(path);
    return false;
  }
  int lineNo = 1;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) continue;
    MetricRecord r;
    if (!parseMetricsCsvRow(line, r, *columns)) {
      // A run killed mid-write can leave a torn last line; everything before it stands.
      if (error) *error = QStringLiteral("%1 line %2 is not a metrics row").arg(path).arg(lineNo);
      return false;
    }
    out.push_back(r);
  }
  return true;
}

bool readRunHistory(const RunInfo& run, std::vector<MetricRecord>& out, QString* error) {
  // The chain of parents, nearest first, each with the step its child branched at.
  std::vector<std::pair<QString, qint64>> parents;
  RunInfo info = run;
  QSet<QString> seen{info.dir};
  while (!info.parentDir.isEmpty() && parents.size() < 32) {
    const qint64 step = info.parentStep;
    info = readRunInfo(info.parentDir);
    if (seen.contains(info.dir) || !QFile::exists(info.dir + "/" + run_files::kMetrics)) break;
    seen.insert(info.dir);
    parents.emplace_back(info.dir, step);
  }
  // Oldest first: each ancestor's rows up to where the next one branched.
  qint64 upTo = std::numeric_limits<qint64>::max();
  std::vector<std::vector<MetricRecord>> parts;
  for (const auto& [dir, step] : parents) {
    upTo = std::min(upTo, step);
    std::vector<MetricRecord> rows, kept;
    readRunMetrics(dir, rows);
    for (const auto& r : rows)
      if (r.step <= upTo) kept.push_back(r);
    parts.push_back(std::move(kept));
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out.insert(out.end(), it->begin(), it->end());
  return readRunMetrics(run.dir, out, error);
}

QString runLabel(const RunInfo& info) {
  const QString name = info.title.isEmpty() ? info.name : info.title;
  return info.started.isValid() ? QString("%1 %2").arg(name, info.started.toString("MM-dd HH:mm:ss")) : info.folderName;
}

}  // namespace studio::ui
