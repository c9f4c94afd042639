// The rules across settings (studio/settings_rules.h), one function each,
// in the order validate() reports them. Torch-free.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_text.h"
#include "studio/class_weights.h"
#include "studio/metric_catalog.h"
#include "studio/model_kinds.h"
#include "studio/settings_rules.h"
#include "studio/settings_schema.h"

namespace studio {
namespace {

using json = nlohmann::json;
using C = TrainConfig;

bool isMultilabel(const C& c) { return c.task.kind == TaskKind::multilabel; }
bool isRegression(const C& c) { return c.task.kind == TaskKind::regression; }
bool isClassification(const C& c) { return c.task.kind == TaskKind::classification; }
// Boxes per image: task.kind detection, or instance_segmentation (a mask per box).
bool isDetection(const C& c) { return boxesTask(c.task.kind); }
bool isInstanceSegmentation(const C& c) { return c.task.kind == TaskKind::instance_segmentation; }
bool isDetector(const C& c) { return isModel(c.model.kind, ModelFamily::detector); }
bool isSegmentation(const C& c) { return c.task.kind == TaskKind::segmentation; }
bool isSegmenter(const C& c) { return isModel(c.model.kind, ModelFamily::segmenter); }
// Detection and segmentation: images with their boxes or masks, whose labels
// are not a class per image.
bool annotatedImages(const C& c) { return isDetection(c) || isSegmentation(c); }
bool folderTargets(const C& c) { return c.data.format == DataFormat::image_folder && !c.data.targets_file.empty(); }

void schemaVersion(const C& c, Errors& e) {
  if (c.schema_version != kConfigSchemaVersion)
    e.push_back({"schema_version", "must be " + std::to_string(kConfigSchemaVersion) + " (got " +
                                       std::to_string(c.schema_version) + ")"});
}

// The name becomes part of a folder's name: nothing that leaves the output
// folder, hides the folder or upsets a terminal.
void folderName(const C& c, Errors& e) {
  if (c.name.empty()) e.push_back({"name", "must not be empty"});
  const bool control = std::any_of(c.name.begin(), c.name.end(),
                                   [](char ch) { return static_cast<unsigned char>(ch) < 32 || ch == 127; });
  if (c.name.find_first_of("/\\") != std::string::npos)
    e.push_back({"name", "must not contain '/' or '\\' (got \"" + c.name + "\")"});
  else if (control)
    e.push_back({"name", "must not contain control characters (tabs, newlines, escapes)"});
  else if (c.name == "." || c.name == ".." || c.name.front() == '.')
    e.push_back({"name", "must not start with '.' (got \"" + c.name + "\")"});
  if (c.name.size() > 100)
    e.push_back({"name", "must be at most 100 characters (got " + std::to_string(c.name.size()) + ")"});
}

void multilabelLoss(const C& c, Errors& e) {
  const auto& loss = c.loss.kind;
  if (isMultilabel(c) && loss != LossKind::auto_ && loss != LossKind::bce)
    e.push_back({"loss.kind", "\"" + loss +
                                  "\" does not fit task.kind multilabel, whose loss is bce (binary "
                                  "cross-entropy per label): set loss.kind to auto or bce"});
  if (!isMultilabel(c) && loss == LossKind::bce)
    e.push_back({"loss.kind", "bce is the multi-label loss; task.kind is " + c.task.kind + ": use auto"});
}

void positiveWeights(const C& c, Errors& e) {
  if (!isMultilabel(c) && c.loss.pos_weight != "none")
    e.push_back({"loss.pos_weight", "weighs each label's positives; it applies to task.kind multilabel (got " +
                                        c.task.kind + "): set it to none, or use loss.class_weights"});
  if (const std::string why = classWeightsProblem(c.loss.pos_weight); !why.empty())
    e.push_back({"loss.pos_weight", why});
}

void tunedThresholds(const C& c, Errors& e) {
  if (isMultilabel(c) && c.task.tune_thresholds && c.data.val_fraction <= 0)
    e.push_back({"task.tune_thresholds",
                 "tunes the thresholds on the validation split: set data.val_fraction "
                 "(e.g. 0.2); tuning them on the test split would overstate the test figures"});
  if (!isMultilabel(c) && c.task.tune_thresholds)
    e.push_back(
        {"task.tune_thresholds", "tunes the labels' thresholds of task.kind multilabel (got " + c.task.kind + ")"});
}

void multilabelData(const C& c, Errors& e) {
  if (isMultilabel(c) && c.data.format != DataFormat::csv && !folderTargets(c))
    e.push_back({"task.kind",
                 "multilabel reads its labels from a table's columns: it needs data.format csv, or "
                 "image_folder with data.targets_file (got \"" +
                     c.data.format + "\")"});
  if (isMultilabel(c) && c.data.tag_separator.empty() && c.data.target_columns.empty())
    e.push_back({"data.tag_separator", "must not be empty: it separates the tags of a multi-label row"});
}

void classificationLoss(const C& c, Errors& e) {
  const auto& loss = c.loss.kind;
  if (isClassification(c) && loss != LossKind::auto_ && loss != LossKind::cross_entropy && loss != LossKind::focal &&
      loss != LossKind::bce)
    e.push_back(
        {"loss.kind", "\"" + loss +
                          "\" does not fit task.kind classification, whose losses are "
                          "cross_entropy and focal: set loss.kind to auto, cross_entropy or focal, or task.kind to "
                          "regression"});
}

void regressionLoss(const C& c, Errors& e) {
  if (isRegression(c) && c.loss.kind == LossKind::cross_entropy)
    e.push_back({"loss.kind",
                 "cross_entropy does not fit task.kind regression: use mse, l1, huber or smooth_l1 "
                 "(auto: mse)"});
  if (c.loss.kind == LossKind::focal && isRegression(c))
    e.push_back({"loss.kind", "focal does not fit task.kind regression: use mse, l1, huber or smooth_l1"});
}

void classWeights(const C& c, Errors& e) {
  if (const std::string why = classWeightsProblem(c.loss.class_weights); !why.empty())
    e.push_back({"loss.class_weights", why});
  if (!isClassification(c) && c.loss.class_weights != "none")
    e.push_back({"loss.class_weights", "weigh the classes of task.kind classification (got " + c.task.kind + ")" +
                                           (isMultilabel(c) ? ": use loss.pos_weight" : ": set it to none")});
}

void labelSmoothing(const C& c, Errors& e) {
  if (!isClassification(c) && c.loss.label_smoothing > 0)
    e.push_back({"loss.label_smoothing",
                 "smooths the class targets of task.kind classification (got " + c.task.kind + "): set it to 0"});
  if (c.loss.kind == LossKind::focal && c.loss.label_smoothing > 0)
    e.push_back({"loss.label_smoothing", "applies to cross_entropy, not to loss.kind focal: set it to 0"});
}

void balancedSampler(const C& c, Errors& e) {
  if (!isClassification(c) && c.data.sampler == SamplerKind::balanced)
    e.push_back({"data.sampler", "balanced draws every class equally often; task.kind " + c.task.kind +
                                     " has no single class per example: use shuffle"});
}

void regressionData(const C& c, Errors& e) {
  if (isRegression(c) && c.data.format != DataFormat::csv && !folderTargets(c))
    e.push_back({"task.kind",
                 "regression reads its targets from a table's columns: it needs data.format csv, or "
                 "image_folder with data.targets_file (got \"" +
                     c.data.format + "\")"});
}

void crossValidationFold(const C& c, Errors& e) {
  const int k = c.data.cv_folds, fold = c.data.cv_fold;
  if (k == 1) e.push_back({"data.cv_folds", "one fold leaves nothing to train on: set 0 (off) or at least 2"});
  if (k >= 2 && (fold < 1 || fold > k))
    e.push_back({"data.cv_fold",
                 "must be a fold from 1 to data.cv_folds (" + std::to_string(k) + "), got " + std::to_string(fold)});
}

void earlyStoppingMetric(const C& c, Errors& e) {
  if (const std::string why = metricTaskProblem(c.train.early_stopping.metric, c.task.kind); !why.empty())
    e.push_back({"train.early_stopping.metric", why});
}

void dataRoot(const C& c, Errors& e) {
  const auto& d = c.data;
  if (d.format != DataFormat::csv) {
    if (d.root.empty()) e.push_back({"data.root", "must name a folder"});
    return;
  }
  if (d.root.empty() && d.train_file.empty())
    e.push_back({"data.root", "must name the table file (a .csv), or set data.train_file"});
  if (isModel(c.model.kind, ModelFamily::cnn) || isModel(c.model.kind, ModelFamily::resnet) ||
      isTorchvisionBackbone(c.model.kind))
    e.push_back({"model.kind",
                 "must be mlp or torchscript with data.format csv: a table has no image for "
                 "\"" +
                     c.model.kind + "\" to convolve"});
}

// The image augmentations on a table: one rule for every field the schema
// marks imagesOnly, refused when set away from its default.
void imagesOnlyOnATable(const C& c, Errors& e) {
  if (c.data.format != DataFormat::csv) return;
  for (const FieldSpec& f : settingsSchema())
    if (!f.imagesOnly.empty() && settingDiffersFromDefault(f, c)) e.push_back({f.path, f.imagesOnly});
}

void imageSizes(const C& c, Errors& e) {
  const auto& d = c.data;
  if (d.format != DataFormat::image_folder) return;
  if (d.image_size.size() != 2) {
    e.push_back({"data.image_size", "must be [height, width] (got " + json(d.image_size).dump() + ")"});
  } else {
    const bool autoSize = d.image_size[0] == 0 && d.image_size[1] == 0;
    const bool ok = autoSize || (d.image_size[0] >= 1 && d.image_size[0] <= 4096 && d.image_size[1] >= 1 &&
                                 d.image_size[1] <= 4096);
    if (!ok)
      e.push_back({"data.image_size", "must be two sizes from 1 to 4096, or [0, 0] for the first image's size (got " +
                                          json(d.image_size).dump() + ")"});
  }
  if (d.channels == 2) e.push_back({"data.channels", "must be 0 (as the first image), 1 or 3 (got 2)"});
  if (d.stored_size != 0 && d.image_size.size() == 2 && d.image_size[0] > 0 && d.image_size[1] > 0 &&
      d.stored_size < std::min(d.image_size[0], d.image_size[1]))
    e.push_back({"data.stored_size", "must be 0 (auto) or at least the image size's shorter side, " +
                                         std::to_string(std::min(d.image_size[0], d.image_size[1])) + " (got " +
                                         std::to_string(d.stored_size) + ")"});
}

void torchScriptFile(const C& c, Errors& e) {
  if (isModel(c.model.kind, ModelFamily::torchscript) && c.model.path.empty())
    e.push_back({"model.path", "must name the TorchScript file (saved in Python with torch.jit.save)"});
}

void runLength(const C& c, Errors& e) {
  if (c.train.epochs == 0 && c.train.max_steps == 0)
    e.push_back({"train.epochs", "must be > 0 when train.max_steps is 0 (got 0)"});
}

void nesterovMomentum(const C& c, Errors& e) {
  const auto& o = c.optimizer;
  if (o.kind == OptimizerKind::sgd && o.nesterov && o.momentum <= 0)
    e.push_back({"optimizer.nesterov", "needs optimizer.momentum > 0 (got " + num(o.momentum) + ")"});
}

void scheduleWarmup(const C& c, Errors& e) {
  const auto& s = c.schedule;
  if (s.warmup_steps > 0 && (s.kind == ScheduleKind::onecycle || s.kind == ScheduleKind::cyclic))
    e.push_back({"schedule.warmup_steps", "must be 0 with schedule.kind \"" + s.kind +
                                              "\", which warms up by itself (got " + std::to_string(s.warmup_steps) +
                                              ")"});
}

void cycledMomentum(const C& c, Errors& e) {
  const auto& s = c.schedule;
  const auto& o = c.optimizer;
  if ((s.kind == ScheduleKind::onecycle && s.onecycle.cycle_momentum) ||
      (s.kind == ScheduleKind::cyclic && s.cyclic.cycle_momentum)) {
    if (o.kind == OptimizerKind::sgd && o.momentum <= 0)
      e.push_back(
          {"schedule." + s.kind + ".cycle_momentum", "needs optimizer.momentum > 0 with sgd, or set it to false"});
  }
}

void deviceName(const C& c, Errors& e) {
  const auto& p = c.performance;
  bool deviceOk = p.device == "auto" || p.device == "cpu" || p.device == "cuda";
  if (!deviceOk && p.device.rfind("cuda:", 0) == 0 && p.device.size() > 5 && p.device.size() < 9)
    deviceOk = p.device.find_first_not_of("0123456789", 5) == std::string::npos;
  if (!deviceOk) e.push_back({"performance.device", "must be auto, cpu, cuda or cuda:N (got \"" + p.device + "\")"});
  if (p.cuda_graphs == CudaGraphs::on && p.device == "cpu")
    e.push_back({"performance.cuda_graphs", "is on, but performance.device is cpu: CUDA graphs need a CUDA GPU"});
}

void checkpointedModels(const C& c, Errors& e) {
  if (c.memory.activation_checkpointing == ActivationCheckpointing::off) return;
  if (isModel(c.model.kind, ModelFamily::torchscript))
    e.push_back({"memory.activation_checkpointing",
                 "works on the built-in models (mlp, cnn, resnet), not on a TorchScript model: its layers "
                 "cannot be split into recomputed segments; set it to off"});
  if (isTorchvisionBackbone(c.model.kind))
    e.push_back({"memory.activation_checkpointing",
                 "works on the built-in models (mlp, cnn, resnet), not yet on torchvision's " + c.model.kind +
                     "; set it to off"});
}

void localWeights(const C& c, Errors& e) {
  if (!c.model.weights.empty() && isTorchvisionBackbone(c.model.kind) && c.model.weights.rfind("http", 0) == 0)
    e.push_back({"model.weights", "must be a file on this machine (got \"" + c.model.weights +
                                      "\"): download torchvision's file first, e.g. with torchvision's "
                                      "models." +
                                      c.model.kind +
                                      "(weights=\"DEFAULT\") in Python, which keeps it "
                                      "under ~/.cache/torch/hub/checkpoints/"});
}

void processDeviceList(const C& c, Errors& e) {
  const auto list = processDevices(c.distributed.devices);
  std::set<std::string> seen;
  bool cpu = false, gpu = false;
  for (const auto& d : list) {
    const bool index = !d.empty() && d.size() <= 3 && std::all_of(d.begin(), d.end(), ::isdigit);
    if (d == "cpu")
      cpu = true;
    else if (index)
      gpu = true;
    if ((d != "cpu" && !index) || (index && !seen.insert(d).second)) {
      e.push_back({"distributed.devices",
                   "must list GPU indices once each (\"0,1\") or cpu per process "
                   "(\"cpu,cpu\"), separated by commas (got \"" +
                       c.distributed.devices + "\")"});
      break;
    }
  }
  if (cpu && gpu)
    e.push_back({"distributed.devices",
                 "lists both GPUs and cpu; one run uses one kind (got \"" + c.distributed.devices + "\")"});
}

void syncedBatchNorm(const C& c, Errors& e) {
  if (c.distributed.batchnorm == BatchNormSync::sync && isModel(c.model.kind, ModelFamily::torchscript))
    e.push_back({"distributed.batchnorm",
                 "sync works on the built-in models (cnn, resnet), whose BatchNorm layers the studio runs; a "
                 "TorchScript model's are its own: set it to local"});
}

void augmentPolicy(const C& c, Errors& e) {
  const auto& d = c.data;
  if (d.augment_policy == AugmentPolicy::randaugment && d.augment_policy_magnitude >= d.augment_policy_bins)
    e.push_back({"data.augment_policy_magnitude", "must be below data.augment_policy_bins, " +
                                                      std::to_string(d.augment_policy_bins) + " (got " +
                                                      std::to_string(d.augment_policy_magnitude) + ")"});
}

void resizedCropRanges(const C& c, Errors& e) {
  const auto& d = c.data;
  if (!d.augment_resized_crop || d.format == DataFormat::csv) return;
  if (d.augment_crop_scale_min > d.augment_crop_scale_max)
    e.push_back({"data.augment_crop_scale_min", "must not exceed data.augment_crop_scale_max (got " +
                                                    num(d.augment_crop_scale_min) + " > " +
                                                    num(d.augment_crop_scale_max) + ")"});
  if (d.augment_crop_ratio_min > d.augment_crop_ratio_max)
    e.push_back({"data.augment_crop_ratio_min", "must not exceed data.augment_crop_ratio_max (got " +
                                                    num(d.augment_crop_ratio_min) + " > " +
                                                    num(d.augment_crop_ratio_max) + ")"});
}

void mixedTargets(const C& c, Errors& e) {
  const auto& d = c.data;
  if ((d.augment_mixup || d.augment_cutmix) && !isClassification(c))
    e.push_back({d.augment_mixup ? "data.augment_mixup" : "data.augment_cutmix",
                 "mixes one-hot class targets; task.kind is " + c.task.kind});
  if ((d.augment_mixup || d.augment_cutmix) && c.loss.kind == LossKind::focal)
    e.push_back({"loss.kind",
                 "focal takes one class per example; MixUp and CutMix give mixed targets: use "
                 "cross_entropy (or auto)"});
}

void frozenLayers(const C& c, Errors& e) {
  const auto& f = c.train.finetune;
  if (f.freeze_epochs > 0 && processDevices(c.distributed.devices).size() > 1)
    e.push_back({"train.finetune.freeze_epochs",
                 "freezes layers, which a run of several processes cannot yet do (their gradients are exchanged "
                 "in fixed buckets); set it to 0 or train in one process"});
  if (f.freeze_epochs > 0 && c.performance.cuda_graphs == CudaGraphs::on)
    e.push_back({"train.finetune.freeze_epochs",
                 "unfreezes layers during the run, which a recorded CUDA graph "
                 "cannot follow: set performance.cuda_graphs to auto or off"});
}

// task.kind detection and segmentation: images under data.root with their
// boxes or masks (detection/, segmentation/, train/tasks/).
void annotatedData(const C& c, Errors& e) {
  const auto& d = c.data;
  if (!annotatedImages(c)) return;
  const std::string task = "task.kind " + c.task.kind;
  if (d.format != DataFormat::image_folder)
    e.push_back({"data.format", task + " reads images under data.root with their " +
                                    (isDetection(c) ? "boxes" : "masks") + ": set data.format image_folder (got \"" +
                                    d.format + "\")"});
  if (isInstanceSegmentation(c) && d.annotations.empty())
    e.push_back({"data.annotations",
                 "task.kind instance_segmentation needs the boxes and their masks: a COCO instances JSON with a "
                 "\"segmentation\" (polygons or RLE) in each annotation, or a YOLO data.yaml of polygon labels"});
  else if (isDetection(c) && d.annotations.empty())
    e.push_back({"data.annotations",
                 "task.kind detection needs the boxes: a COCO instances JSON, a YOLO data.yaml or "
                 "a folder of Pascal VOC XML files"});
  if (isInstanceSegmentation(c) && d.annotation_format == AnnotationFormat::voc)
    e.push_back({"data.annotation_format",
                 "task.kind instance_segmentation reads masks from COCO's segmentations or YOLO's polygons, and VOC's "
                 "files give boxes only: set auto, coco or yolo"});
  if (d.channels == 1)
    e.push_back({"data.channels", c.model.kind + " takes RGB images: set 0 or 3 (grayscale images are converted)"});
  if (!d.corrections.empty())
    e.push_back({"data.corrections", "relabels or removes whole images of a classifier's data; " + task +
                                         "'s labels are its " + (isDetection(c) ? "boxes" : "masks") +
                                         ": correct them in data.annotations"});
  if (d.cv_folds > 0)
    e.push_back(
        {"data.cv_folds", "cross-validation (the audit) scores a classifier's examples; " + task + " has none: set 0"});
}

void detectorModel(const C& c, Errors& e) {
  const DetectorFamily* family = findDetectorFamily(c.model.kind);
  if (isInstanceSegmentation(c) && !(family && family->masks))
    e.push_back({"model.kind", "task.kind instance_segmentation needs a detector with masks: one of " +
                                   maskDetectorKindsText() + " (got \"" + c.model.kind + "\")"});
  else if (isDetection(c) && !isInstanceSegmentation(c) && !(family && !family->masks))
    e.push_back({"model.kind",
                 "task.kind detection needs a detector: one of " + detectorKindsText() + " (got \"" + c.model.kind +
                     "\")" +
                     (family ? "; " + c.model.kind + " finds masks too: set task.kind instance_segmentation" : "")});
  if (!isDetection(c) && isDetector(c))
    e.push_back({"model.kind", c.model.kind + " finds boxes: set task.kind to " +
                                   (family->masks ? "instance_segmentation" : "detection") +
                                   ", with data.annotations (got " + c.task.kind + ")"});
  if (isDetection(c) && c.loss.kind != LossKind::auto_)
    e.push_back({"loss.kind",
                 "a detector's loss is its own (torchvision's sum of its parts): set loss.kind to auto "
                 "(got \"" +
                     c.loss.kind + "\")"});
  const auto& m = c.model.detector;
  if (isDetector(c) && m.min_size > 0 && m.max_size > 0 && m.max_size < m.min_size)
    e.push_back({"model.detector.max_size", "must be at least model.detector.min_size (got " +
                                                std::to_string(m.max_size) + " < " + std::to_string(m.min_size) + ")"});
}

void segmenterModel(const C& c, Errors& e) {
  if (isSegmentation(c) && !isSegmenter(c))
    e.push_back({"model.kind", "task.kind segmentation needs a segmentation model: one of " + segmenterKindsText() +
                                   " (got \"" + c.model.kind + "\")"});
  if (!isSegmentation(c) && isSegmenter(c))
    e.push_back({"model.kind",
                 c.model.kind + " gives a class per pixel: set task.kind to segmentation (got " + c.task.kind + ")"});
  if (isSegmentation(c) && c.loss.kind != LossKind::auto_ && c.loss.kind != LossKind::cross_entropy)
    e.push_back({"loss.kind",
                 "a segmenter's loss is cross-entropy per pixel (torchvision's references'): set "
                 "loss.kind to auto or cross_entropy (got \"" +
                     c.loss.kind + "\")"});
  const auto& m = c.model.segmenter;
  if (isSegmenter(c) && m.aux_loss && !segmenterHasAux(c.model.kind))
    e.push_back({"model.segmenter.aux_loss", c.model.kind + " has no auxiliary head (torchvision's has none): set it "
                                                            "off, or choose deeplabv3_* or fcn_resnet50"});
  if (isSegmenter(c) && m.crop_size > 2 * m.base_size)
    e.push_back({"model.segmenter.crop_size",
                 "must be at most twice model.segmenter.base_size, the largest a training image is resized to (got " +
                     std::to_string(m.crop_size) + " > 2 x " + std::to_string(m.base_size) + ")"});
}

// Each detector's image keeps its own shape, and a segmenter's evaluation
// too, so the shapes change from batch to batch: nothing a CUDA graph can
// replay, nor a block to checkpoint.
void annotatedSteps(const C& c, Errors& e) {
  if (!annotatedImages(c)) return;
  if (c.performance.cuda_graphs == CudaGraphs::on)
    e.push_back({"performance.cuda_graphs",
                 isDetection(c) ? "records a step of fixed shapes; a detector's images keep their own "
                                  "sizes, so each step's shapes differ: set it to auto or off"
                                : "records a step of fixed shapes; a segmenter's step resizes and crops each "
                                  "image in the step itself: set it to auto or off"});
  if (c.memory.activation_checkpointing != ActivationCheckpointing::off)
    e.push_back({"memory.activation_checkpointing",
                 "is not built for " + std::string(isDetection(c) ? "detectors" : "segmenters") +
                     " yet: set it to off (lower train.batch_size or the model's image sizes for memory)"});
}

void outputFolder(const C& c, Errors& e) {
  if (c.output.dir.empty()) e.push_back({"output.dir", "must name a folder"});
}

}  // namespace

const std::vector<SettingsRule>& settingsRules() {
  static const std::vector<SettingsRule> rules{
      {"schema-version", schemaVersion},
      {"folder-name", folderName},
      {"multilabel-loss", multilabelLoss},
      {"positive-weights", positiveWeights},
      {"tuned-thresholds", tunedThresholds},
      {"multilabel-data", multilabelData},
      {"classification-loss", classificationLoss},
      {"regression-loss", regressionLoss},
      {"class-weights", classWeights},
      {"label-smoothing", labelSmoothing},
      {"balanced-sampler", balancedSampler},
      {"regression-data", regressionData},
      {"cross-validation-fold", crossValidationFold},
      {"early-stopping-metric", earlyStoppingMetric},
      {"data-root", dataRoot},
      {"images-only-on-a-table", imagesOnlyOnATable},
      {"image-sizes", imageSizes},
      {"torchscript-file", torchScriptFile},
      {"run-length", runLength},
      {"nesterov-momentum", nesterovMomentum},
      {"schedule-warmup", scheduleWarmup},
      {"cycled-momentum", cycledMomentum},
      {"device-name", deviceName},
      {"checkpointed-models", checkpointedModels},
      {"local-weights", localWeights},
      {"process-devices", processDeviceList},
      {"synced-batchnorm", syncedBatchNorm},
      {"augment-policy", augmentPolicy},
      {"resized-crop-ranges", resizedCropRanges},
      {"mixed-targets", mixedTargets},
      {"frozen-layers", frozenLayers},
      {"annotated-data", annotatedData},
      {"detector-model", detectorModel},
      {"segmenter-model", segmenterModel},
      {"annotated-steps", annotatedSteps},
      {"output-folder", outputFolder},
  };
  return rules;
}

}  // namespace studio
