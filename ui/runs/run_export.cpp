#include "ui/runs/run_export.h"

#include <QDir>
#include <QFile>
#include <QObject>

#include <cmath>

#include "studio/run_layout.h"
#include "studio/session.h"
#include "studio/train_config.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/runs/run_catalog.h"

namespace studio::ui {

std::vector<std::pair<QString, std::string>> exportWeightChoices(const QString& runDir) {
  std::vector<std::pair<QString, std::string>> out{
      {QObject::tr("The weights of its test figures (as the CLI's --which auto)"), "auto"}};
  const bool best = QFile::exists(runDir + "/" + run_files::kBestCheckpoint);
  if (best) out.emplace_back(QObject::tr("The best checkpoint's (its best evaluation)"), "best");
  out.emplace_back(QObject::tr("The last weights (where training ended)"), "last");
  try {
    if (loadConfigFile((runDir + "/" + run_files::kSettings).toStdString()).train.ema.decay > 0)
      out.emplace_back(QObject::tr("The moving average of the weights (train.ema)"), "ema");
  } catch (const std::exception&) {
    // unreadable settings: the export itself says so
  }
  return out;
}

// Under an exported chart: which run, and the settings that tell runs apart.
QString exportCaption(const QString& runDir) {
  const RunInfo info = readRunInfo(runDir);
  QStringList parts{info.folderName};
  try {
    const TrainConfig c = loadConfigFile((runDir + "/" + run_files::kSettings).toStdString());
    if (!info.model.isEmpty()) parts << QObject::tr("model %1").arg(info.model);
    // The rate that acts: OneCycle's and cyclic's own, not optimizer.lr they override.
    const auto& s = c.schedule;
    const QString lr = s.kind == ScheduleKind::onecycle ? QObject::tr("max_lr %1").arg(s.onecycle.max_lr, 0, 'g', 4)
                       : s.kind == ScheduleKind::cyclic
                           ? QObject::tr("lr %1–%2").arg(s.cyclic.base_lr, 0, 'g', 4).arg(s.cyclic.max_lr, 0, 'g', 4)
                           : QObject::tr("lr %1").arg(c.optimizer.lr, 0, 'g', 4);
    parts << QObject::tr("%1 %2").arg(QString::fromStdString(c.optimizer.kind.name()), lr)
          << QObject::tr("batch %1 x %2").arg(c.train.batch_size).arg(c.train.accumulation_steps)
          << QObject::tr("schedule %1").arg(QString::fromStdString(c.schedule.kind.name()))
          << QString::fromStdString(c.precision.mode.name());
  } catch (const std::exception&) {
    // A folder without readable settings: its name says which run it is.
  }
  parts << QObject::tr("%1 of %2 steps").arg(info.steps).arg(info.totalSteps);
  if (const QString best = bestText(info, true); !best.isEmpty()) parts << QObject::tr("best %1").arg(best);
  return parts.join(QStringLiteral("  ·  "));
}

QStringList exportRunFiles(const QString& runDir, const QString& outDir, const ExportTarget& target, QString* error) {
  QStringList written;
  try {
    const ExportResult r = exportRun(runDir.toStdString(), outDir.toStdString(), target.options);
    for (const auto& f : r.files) written << QString::fromStdString(f);
    if (!r.note.empty()) target.note(QString::fromStdString(r.note));
    if (target.checked && !r.checks.empty()) {
      QStringList lines;
      for (const auto& line : r.checks) lines << QString::fromStdString(line);
      target.checked(lines);
    }
    // (exportRun wrote metrics.csv, summary.json and log.txt among them, never over a device or through a
    // link: they were copied again here with QFile::remove and copy.)
    // The plots of exactly this run.
    if (target.plots->runKeys() != QStringList{QDir(runDir).absolutePath()}) target.showRuns({runDir});
    const QStringList failed = target.plots->exportPlots(outDir, target.chartSize, exportCaption(runDir));
    if (!failed.isEmpty()) throw std::runtime_error(("cannot write " + failed.join(", ")).toStdString());
    for (auto* c : target.plots->charts())
      written << outDir + "/" + c->objectName() + ".png" << outDir + "/" + c->objectName() + ".pdf";
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
  return written;
}

}  // namespace studio::ui
