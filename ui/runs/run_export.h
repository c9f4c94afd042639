#pragma once
// File > Export run…: the run's files for Python (through the engine's
// exportRun: model.pt, checkpoint.ckpt, settings.json, the model card
// README.md, and with ONNX model.onnx checked in ONNX Runtime), its metrics.csv,
// summary.json and log.txt, and every chart of exactly this run as PNG and
// PDF at the chosen size, each captioned with the run and the settings that
// tell runs apart.
// Thread: the UI thread.

#include <QSize>
#include <QString>
#include <QStringList>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "studio/session.h"

namespace studio::ui {

class PlotsPanel;

struct ExportTarget {
  PlotsPanel* plots;
  QSize chartSize;
  // Shows exactly these runs' curves (the charts to export).
  std::function<void(const QStringList&)> showRuns;
  // A note from the export (what it could not include), for the person.
  std::function<void(const QString&)> note;
  // The format and its checks (ExportOptions: torch, onnx, int8).
  ExportOptions options;
  // What the check in Python said, line by line (an ONNX export).
  std::function<void(const QStringList&)> checked;
};

// A chart's caption for a run: its name and folder, the settings that tell
// runs apart, its steps and best figure (exports, and a chart's Save as).
QString exportCaption(const QString& runDir);

// The weights an export of the run may take, as (what the dialog says,
// ExportOptions::which): its test figures' (auto) and the last always, the
// best checkpoint's when it has one, the moving average's when it kept one
// (train.ema). Issue 60: the dialog offered no choice.
std::vector<std::pair<QString, std::string>> exportWeightChoices(const QString& runDir);

// The files written, or empty with `error`.
QStringList exportRunFiles(const QString& runDir, const QString& outDir, const ExportTarget& target, QString* error);

}  // namespace studio::ui
