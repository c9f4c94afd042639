#include "ui/window/preview_coordinator.h"

#include "studio/augment_preview.h"
#include "studio/model_kinds.h"
#include "ui/common/box_drawing.h"
#include "ui/data/augment_preview_view.h"

#include <QTimer>

#include <algorithm>

#include "studio/data_plan.h"
#include "studio/image_file.h"

#include "studio/lr_schedule.h"
#include "studio/sha256.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/data/data_panel.h"
#include "ui/data/model_panel.h"
#include "ui/runs/run_catalog.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/trust_store.h"

namespace studio::ui {

PreviewCoordinator::PreviewCoordinator(SettingsPanel* settings, DataPanel* data, ModelPanel* model, PlotsPanel* plots,
                                       TrustStore* trust, QObject* parent)
    : QObject(parent),
      m_settings(settings),
      m_data(data),
      m_model(model),
      m_plots(plots),
      m_trust(trust),
      m_timer(new QTimer(this)),
      m_dataJob(this),
      m_modelJob(this),
      m_augmentJob(this) {
  m_timer->setSingleShot(true);
  m_timer->setInterval(80);  // typing coalesces into one schedule redraw
  connect(m_timer, &QTimer::timeout, this, [this] {
    checkData();
    updateSchedulePreview();
    updateModelSummary();  // the Model tab follows every model setting, as the Data tab the data's
    updateAugmentPreview();
  });
  connect(m_trust, &TrustStore::trusted, this, [this] { refreshModel(); });
  connect(m_data, &DataPanel::recheckRequested, this, [this] { checkData(true); });
}

void PreviewCoordinator::settingsEdited() { m_timer->start(); }

void PreviewCoordinator::updateSchedulePreview() {
  const TrainConfig c = m_settings->config();
  if (!validate(c).empty()) return;  // the form shows what to fix
  // The chart's title speaks of the form's plan only while that plan is drawn
  // (a past run shown alone draws, and titles, its own).
  MetricChart* lr = m_plots->showsOwnPlan() ? nullptr : m_plots->chart(PlotsPanel::LearningRate);
  auto title = [lr](const QString& text) {
    if (lr) lr->setTitle(text);
  };
  if (m_previewKey != dataPreviewKey(c) || !m_previewDone) {
    title(tr("Learning rate (planning: reading the data…)"));
    return;
  }
  if (!m_preview.ok) {
    m_plots->setSchedulePreview({});
    title(tr("Learning rate (no plan: %1)").arg(m_preview.error));
    m_settings->setPlanError({}, {});
    return;
  }
  const StepPlan plan = planSteps(c, m_preview.description.trainSize());
  // Only the plan knows the run's length: a warm-up that never ends is an
  // error at its field before Start, not a schedule that never reaches its rate.
  const int64_t warmup = c.schedule.warmup_steps;
  m_settings->setPlanError("schedule.warmup_steps",
                           warmup > 0 && warmup >= plan.totalSteps
                               ? tr("the warm-up (%1 steps) is as long as the whole run (%2 steps planned, %3 per "
                                    "epoch); lower it or train for longer")
                                     .arg(warmup)
                                     .arg(plan.totalSteps)
                                     .arg(plan.stepsPerEpoch)
                               : QString());
  const LrSchedule schedule(c.schedule, c.optimizer.lr, plan.totalSteps);
  m_plots->setSchedulePreview(
      sampleSteps(plan.totalSteps, [&](int64_t i) { return schedule.lr(i); }),
      {static_cast<double>(plan.stepsPerEpoch), static_cast<double>(c.train.batch_size) * c.train.accumulation_steps});
  title(tr("Learning rate (plan: %1 steps, %2/epoch)").arg(plan.totalSteps).arg(plan.stepsPerEpoch));
}

bool PreviewCoordinator::dataChecked() const {
  return m_previewDone && m_previewKey == dataPreviewKey(m_settings->config());
}

// A folder of 60,000 images takes a moment to scan: on a worker thread; the
// result fills the Data tab, the plan and, on error, the inline message
// under the setting it is about.
void PreviewCoordinator::checkData(bool force) {
  const TrainConfig c = m_settings->config();
  const QString key = dataPreviewKey(c);
  if (!force && key == m_previewKey) return;
  m_previewKey = key;
  m_previewDone = false;
  m_settings->setDataError({}, {});
  m_data->showLoading(QString::fromStdString(c.data.root.empty() ? c.data.train_file : c.data.root));
  m_dataJob.start([c] { return makeDataPreview(c); }, [this, key](const DataPreview& p) { onDataPreview(key, p); });
}

void PreviewCoordinator::onDataPreview(const QString& key, const DataPreview& p) {
  if (key != m_previewKey) return;
  m_preview = p;
  m_previewDone = true;
  m_data->showPreview(p);
  // An error is the data's only while the settings themselves are valid.
  m_settings->setDataError(p.field, p.ok ? QString() : p.error);
  updateSchedulePreview();
  updateModelSummary();
  updateAugmentPreview();
}

namespace {

// What the augmentation settings turn on, in the loader's order.
QString augmentationsOn(const DataConfig& d) {
  QStringList on;
  if (d.augment_resized_crop)
    on << QObject::tr("resized crop (area %1-%2)").arg(d.augment_crop_scale_min).arg(d.augment_crop_scale_max);
  if (d.augment_crop > 0) on << QObject::tr("pad-and-crop %1 px").arg(d.augment_crop);
  if (d.augment_flip) on << QObject::tr("horizontal flip");
  if (d.augment_policy == AugmentPolicy::randaugment)
    on << QObject::tr("RandAugment (%1 operations at magnitude %2 of %3)")
              .arg(d.augment_policy_ops)
              .arg(d.augment_policy_magnitude)
              .arg(d.augment_policy_bins);
  if (d.augment_policy == AugmentPolicy::trivialaugment) on << QObject::tr("TrivialAugmentWide");
  if (d.augment_vflip) on << QObject::tr("vertical flip");
  if (d.augment_rotation > 0) on << QObject::tr("rotation ±%1°").arg(d.augment_rotation);
  if (d.augment_brightness > 0 || d.augment_contrast > 0 || d.augment_saturation > 0 || d.augment_hue > 0)
    on << QObject::tr("colour jitter");
  if (d.augment_erasing > 0) on << QObject::tr("random erasing (p %1)").arg(d.augment_erasing);
  return on.join(", ");
}

// A detector's box augmentations, in the training step's order.
QString boxAugmentationsOn(const DataConfig& d) {
  QStringList on;
  if (d.augment_photometric) on << QObject::tr("photometric distortion");
  if (d.augment_zoom_out) on << QObject::tr("zoom out (up to 4x)");
  if (d.augment_iou_crop) on << QObject::tr("IoU crop");
  if (d.augment_flip) on << QObject::tr("horizontal flip");
  return on.isEmpty() ? QString() : on.join(", ") + QObject::tr("; the boxes follow the pixels");
}

// A detector's preview: the first training image with a box of each of the
// first three classes, drawn six times through the box augmentations with
// the boxes that remain drawn over them.
std::vector<std::vector<QImage>> boxedDraws(const TrainConfig& c) {
  const DataPlan plan = planData(c);
  const BoxAnnotations& a = plan.boxes;
  std::vector<std::string> classes;
  for (const auto& cat : a.categories) classes.push_back(cat.name);
  std::vector<BoxedPreview> images;
  std::vector<bool> taken(classes.size(), false);
  for (const int64_t item : plan.train.items) {
    BoxedPreview p;
    for (const auto& b : a.boxes)
      if (b.image == item && !b.crowd) {
        p.boxes.push_back({b.x, b.y, b.w, b.h});
        p.labels.push_back(b.label);
      }
    const auto fresh =
        std::find_if(p.labels.begin(), p.labels.end(), [&](int64_t l) { return !taken[static_cast<size_t>(l)]; });
    if (fresh == p.labels.end()) continue;
    taken[static_cast<size_t>(*fresh)] = true;
    try {
      p.image = decodeImageFile(a.images[static_cast<size_t>(item)].file, 3);
    } catch (const DataError&) {
      continue;  // the run says more
    }
    images.push_back(std::move(p));
    if (images.size() == 3) break;
  }
  std::vector<std::vector<QImage>> rows;
  for (const auto& draws : previewBoxAugmentations(c, images, 6)) {
    rows.emplace_back();
    for (const BoxedPreview& d : draws) {
      std::vector<DrawnBox> boxes;
      for (size_t j = 0; j < d.boxes.size(); ++j)
        boxes.push_back({d.boxes[j][0], d.boxes[j][1], d.boxes[j][2], d.boxes[j][3], d.labels[j], -1});
      rows.back().push_back(drawBoxes(toQImage(d.image), boxes, classes, kBoxedSampleSize));
    }
  }
  return rows;
}

// MixUp and CutMix act on whole training batches, after the image's own
// augmentations: said beside the preview, which draws images one by one.
QString batchMixing(const TrainConfig& c) {
  const bool mix = c.data.augment_mixup && c.task.kind == TaskKind::classification,
             cut = c.data.augment_cutmix && c.task.kind == TaskKind::classification;
  if (!mix && !cut) return QString();
  const QString which = mix && cut ? QObject::tr("MixUp or CutMix (one per batch)")
                        : mix      ? QObject::tr("MixUp")
                                   : QObject::tr("CutMix");
  return QObject::tr(
             "then %1 blends each training batch with itself shifted by one, labels alike (not drawn here: "
             "it mixes whole batches)")
      .arg(which);
}

}  // namespace

void PreviewCoordinator::updateAugmentPreview() {
  AugmentPreviewView* view = m_data->augmentPreview();
  const TrainConfig c = m_settings->config();
  if (!m_previewDone || !m_preview.ok || m_previewKey != dataPreviewKey(c) || c.data.format == DataFormat::csv) {
    m_augmentKey.clear();
    view->showNothing(c.data.format == DataFormat::csv ? tr("Tables are not augmented.") : QString());
    return;
  }
  const bool boxes = boxesTask(c.task.kind);
  const QString mixing = batchMixing(c);
  QString on = boxes ? boxAugmentationsOn(c.data) : augmentationsOn(c.data);
  if (on.isEmpty()) {
    m_augmentKey.clear();
    view->showNothing(
        mixing.isEmpty()
            ? (boxes ? tr("<b>Augmentation preview</b>: no box augmentation is on (Data: horizontal flip, "
                          "photometric distortion, zoom out, IoU crop).")
                     : tr("<b>Augmentation preview</b>: no augmentation is on (Data: random resized crop, flips, "
                          "rotation, colour jitter, random erasing)."))
            : tr("<b>Augmentation preview</b>: no augmentation of single images is on; %1.")
                  .arg(mixing.toHtmlEscaped()));
    return;
  }
  if (!mixing.isEmpty()) on += "; " + mixing;
  nlohmann::json k = toJson(c)["data"];
  k["seed"] = c.train.seed;
  k["input"] = m_preview.description.input.text();
  const QString key = QString::fromStdString(k.dump());
  if (key == m_augmentKey) return;
  m_augmentKey = key;
  if (boxes) {
    m_augmentJob.start(
        [c] {
          try {
            return boxedDraws(c);
          } catch (const std::exception&) {
            return std::vector<std::vector<QImage>>{};  // the Data tab says what is wrong with the data
          }
        },
        [this, key, on](const std::vector<std::vector<QImage>>& rows) {
          if (key == m_augmentKey) m_data->augmentPreview()->showDraws(rows, on);
        });
    return;
  }
  // The first image of each of the first three classes (or rows).
  // Gray samples of an RGB run (a backbone on Fashion-MNIST) become RGB, as the run's images do.
  const bool rgb = m_preview.description.input.channels == 3;
  std::vector<Image> images;
  for (const auto& row : m_preview.samples)
    if (!row.empty() && !row.front().isNull() && images.size() < 3)
      images.push_back(toImage(rgb ? row.front().convertToFormat(QImage::Format_RGB888) : row.front()));
  const int64_t h = m_preview.description.input.height, w = m_preview.description.input.width;
  m_augmentJob.start(
      [c, images, h, w] {
        std::vector<std::vector<QImage>> rows;
        for (const auto& draws : previewAugmentations(c, images, h, w, 6)) {
          rows.emplace_back();
          for (const Image& img : draws) rows.back().push_back(toQImage(img));
        }
        return rows;
      },
      [this, key, on](const std::vector<std::vector<QImage>>& rows) {
        if (key == m_augmentKey) m_data->augmentPreview()->showDraws(rows, on);
      });
}

void PreviewCoordinator::refreshModel() {
  m_modelKey.clear();
  updateModelSummary();
}

void PreviewCoordinator::updateModelSummary() {
  const TrainConfig c = m_settings->config();
  if (m_previewKey != dataPreviewKey(c) || !m_previewDone || !m_preview.ok) {
    m_modelKey.clear();
    m_model->showError(!m_previewDone || m_preview.ok ? tr("waiting for the data") : tr("the data cannot be read"));
    return;
  }
  nlohmann::json k = toJson(c)["model"];
  k["finetune"] = toJson(c)["train"]["finetune"];  // the fine-tune column and the trained count follow its edits
  k["input"] = m_preview.description.input.text();
  k["classes"] = m_preview.description.classNames.size();
  QString sha;
  if (isModel(c.model.kind, ModelFamily::torchscript)) {
    try {
      sha = QString::fromStdString(sha256OfFile(c.model.path));
    } catch (const std::exception& e) {
      m_modelKey.clear();
      m_model->showError(QString::fromStdString(e.what()));
      return;
    }
    if (!m_trust->contains(sha)) {
      m_modelKey.clear();
      m_model->showUntrusted(QString::fromStdString(c.model.path), sha);
      return;
    }
    k["sha256"] = sha.toStdString();
  }
  const QString key = QString::fromStdString(k.dump());
  if (key == m_modelKey) return;
  m_modelKey = key;
  m_model->showLoading();
  m_modelJob.start(
      [c]() -> std::pair<ModelSummary, QString> {
        try {
          return {summarizeModel(c), QString()};
        } catch (const std::exception& e) {
          return {ModelSummary{}, QString::fromStdString(e.what())};
        }
      },
      [this, key](const std::pair<ModelSummary, QString>& r) {
        if (key != m_modelKey) return;  // the settings changed meanwhile: a newer summary is coming
        if (r.second.isEmpty())
          m_model->showSummary(r.first);
        else
          m_model->showError(r.second);
      });
}

RunShape PreviewCoordinator::liveShape(const RunInfo& info) const {
  RunShape shape{info.stepsPerEpoch, info.samplesPerStep};
  const TrainConfig c = m_settings->config();
  if (shape.stepsPerEpoch <= 0 && m_previewDone && m_preview.ok && m_previewKey == dataPreviewKey(c))
    shape.stepsPerEpoch = static_cast<double>(planSteps(c, m_preview.description.trainSize()).stepsPerEpoch);
  return shape;
}

}  // namespace studio::ui
