#pragma once
// What the form's settings would do, worked out while they are edited: the
// data they select (read on a worker thread: the Data tab, the inline data
// errors), the learning-rate plan over it (the schedule preview, a warm-up
// longer than the run), and the model's summary (the Model tab, on its own
// worker). Typing coalesces: an edit arms a short timer, and its timeout
// checks once.
// Thread: the UI thread (the jobs' work on their threads).

#include <QObject>
#include <QString>

#include <utility>

#include "studio/model_summary.h"
#include "ui/common/background_job.h"
#include "ui/data/data_preview.h"

class QTimer;

namespace studio::ui {

class DataPanel;
class ModelPanel;
class PlotsPanel;
class SettingsPanel;
class TrustStore;
struct RunInfo;
struct RunShape;

class PreviewCoordinator : public QObject {
  Q_OBJECT

 public:
  PreviewCoordinator(SettingsPanel* settings, DataPanel* data, ModelPanel* model, PlotsPanel* plots, TrustStore* trust,
                     QObject* parent);

  // The form changed: check again once typing pauses.
  void settingsEdited();
  // Reads the data the settings select, unless that was read already
  // (`force`: again, the Data tab's Check again).
  void checkData(bool force = false);
  void updateSchedulePreview();
  // The model's summary again (after a TorchScript file was trusted).
  void refreshModel();
  // The data check of the current settings has finished.
  bool dataChecked() const;
  // How a run's steps translate into epochs and samples, for the x-axis: its
  // own, or while it has not read its data yet, the plan of the form's
  // settings (which it runs) on the data the form checked.
  RunShape liveShape(const RunInfo& info) const;

 private:
  void onDataPreview(const QString& key, const DataPreview& preview);
  void updateModelSummary();
  // The Data tab's augmentation preview, when the data or the augmentations change.
  void updateAugmentPreview();

  SettingsPanel* m_settings;
  DataPanel* m_data;
  ModelPanel* m_model;
  PlotsPanel* m_plots;
  TrustStore* m_trust;
  QTimer* m_timer;
  BackgroundJob<DataPreview> m_dataJob;
  BackgroundJob<std::pair<ModelSummary, QString>> m_modelJob;
  BackgroundJob<std::vector<std::vector<QImage>>> m_augmentJob;
  QString m_augmentKey;
  QString m_previewKey;  // the data settings of the preview shown (or under way)
  bool m_previewDone = false;
  DataPreview m_preview;
  QString m_modelKey;
};

}  // namespace studio::ui
