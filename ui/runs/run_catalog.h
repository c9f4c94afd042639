#pragma once
// The runs on disk: each run folder's settings, summary and metrics, read for
// the runs list and for redrawing a run's curves. Widget-free.
// Thread: free functions, any thread.

#include <QDateTime>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "studio/metric_record.h"
#include "studio/run_summary.h"
#include "studio/train_config.h"

namespace studio::ui {

// The Model column's text for model settings: "cnn w32 d2", or
// "TorchScript net.ts" (a TorchScript file has no width or depth).
QString modelText(const QString& kind, qint64 width, qint64 depth, const QString& path);

struct RunInfo {
  QString dir;
  QString folderName;
  QString name;   // the settings' name (the preset's, unless renamed)
  QString model;  // "cnn w32 d2"
  QDateTime started;
  // What the runs table says: summary.json's status (ended), or running,
  // interrupted (no summary), unreadable, or training elsewhere (another
  // process trains it now: not resumable here).
  QString status;
  std::optional<RunStatus> ended;  // summary.json's status; unset without one
  QString error;
  // summary.json's figures, keyed by metric id: the best evaluation's
  // score (the task's: accuracy, R² or mAP), the test figures, and the last
  // weights' when the test figures are the best checkpoint's. The weights
  // the test figures are of: "best" at testWeightsStep, or "last".
  Figures best, test, lastTest;
  QString testWeights;
  qint64 testWeightsStep = 0;
  qint64 steps = 0;
  qint64 totalSteps = 0;
  QString device;
  // "lr-find" or "batch-find": a probe's folder, not a training run ("" for a run).
  QString probe;
  // Did not complete, and has checkpoints/last.ckpt or is an interrupted
  // run without one yet (it resumes from step 0; not a fork).
  bool resumable = false;
  bool hasCheckpoint = false;  // checkpoints/last.ckpt: it can be continued or forked
  // A fork: its parent's folder, the step it branched at, and the settings
  // it changed ("optimizer.lr 0.05 → 0.01"); continuations made in place.
  QString parentDir;
  qint64 parentStep = 0;
  QStringList changed;
  int continuations = 0;
  // Every setting of settings.json as "section.key" → its value as text
  // (what the engine filled in after the start, run_info, left out).
  QMap<QString, QString> settings;
  // Steps per epoch (once the run has read its data: 0 before) and training
  // samples per optimizer step (batch x accumulation x processes).
  double stepsPerEpoch = 0;
  double samplesPerStep = 0;
  // A run on a labels file (a classifier's data.targets_file, a detector's
  // data.annotations: the Label tab's): the labelled images it trained,
  // validated and tested on; -1 for other runs, or before it read its data.
  qint64 labels = -1;
  // A search's trial (trial.json, written by the search runner): "study
  // NAME, trial N", and whether its pruner stopped it (a stopped run that
  // resumes like any other).
  QString trial;
  bool pruned = false;
  // The person's own title, tags and notes (notes.json; never the engine's).
  QString title;
  QStringList tags;
  QString notes;
};

// The settings whose values are not the same in all these runs (a setting a
// run lacks counts as empty), sorted; the name and the output folder, which
// differ between any two runs, are left out.
QStringList differingSettings(const std::vector<RunInfo>& runs);
// The same of settings given as text (RunInfo::settings, settingsText).
QStringList differingSettings(const std::vector<QMap<QString, QString>>& settings);
// Every setting as "section.key" -> its value as text, as RunInfo::settings holds them.
QMap<QString, QString> settingsText(const TrainConfig& config);
// Writes the run's notes.json (title, tags, notes) atomically, never through
// a link; false with the reason when it cannot.
bool writeRunNotes(const QString& runDir, const QString& title, const QStringList& tags, const QString& notes,
                   QString* error = nullptr);

// Run folders (those holding a settings.json) under runsDir, newest first.
std::vector<RunInfo> listRuns(const QString& runsDir);
// "test accuracy 88.00 % with the best checkpoint's weights (step 80); the
// last weights: 86.50 %": the test figure and the weights it is of ("" when
// the run has none).
QString testFiguresText(const RunInfo& run);
// The best evaluation's score as the Best column shows it ("91.20 %",
// "R² 0.8123", "mAP 0.4512"; named: "accuracy 91.20 %"); "" when the run
// has none.
QString bestText(const RunInfo& run, bool named = false);
RunInfo readRunInfo(const QString& runDir);
// Every record of the run's metrics.csv. False, with a message naming the
// file and line, when it cannot be read; rows read before a bad one are kept.
bool readRunMetrics(const QString& runDir, std::vector<MetricRecord>& out, QString* error = nullptr);
// As readRunMetrics, and for a fork first its parent's records up to the
// step it branched at (and theirs, for a fork of a fork): the fork's curves
// on the parent's step axis. A parent that is gone or unreadable is left out.
// `run`: the run's readRunInfo.
bool readRunHistory(const RunInfo& run, std::vector<MetricRecord>& out, QString* error = nullptr);

// A run as its curves are labelled: its title (or name) and when it started.
QString runLabel(const RunInfo& info);

}  // namespace studio::ui
