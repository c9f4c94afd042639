#include "studio/settings_schema.h"
#include "studio/model_kinds.h"

#include "config_text.h"
#include "schema_builder.h"

#include <cmath>
#include <sstream>

namespace studio {
namespace {

using namespace schema;

std::vector<FieldSpec> makeSchema() {
  std::vector<FieldSpec> f;
  const std::string model = "Model", data = "Data";
  Fields add(f);
  const Rule builtIn{[](const TrainConfig& c) { return isBuiltinModel(c.model.kind); },
                     "model.kind mlp, cnn or resnet"};
  const Rule backbone{[](const TrainConfig& c) { return isTorchvisionBackbone(c.model.kind); },
                      "a torchvision model.kind (resnet18, resnet34, resnet50, mobilenet_v3_small, "
                      "mobilenet_v3_large, efficientnet_b0)"};
  const Rule idx{[](const TrainConfig& c) { return c.data.format == DataFormat::idx; }, "data.format idx"};
  const Rule folder{[](const TrainConfig& c) { return c.data.format == DataFormat::image_folder; },
                    "data.format image_folder"};
  const Rule csv{[](const TrainConfig& c) { return c.data.format == DataFormat::csv; }, "data.format csv"};
  const Rule folderOrTable{[](const TrainConfig& c) { return c.data.format != DataFormat::idx; },
                           "data.format image_folder or csv"};
  const Rule images{[](const TrainConfig& c) { return c.data.format != DataFormat::csv; },
                    "images (data.format idx or image_folder)"};
  // A detector and a segmenter size each image themselves (model.detector.*, model.segmenter.*).
  const Rule folderNotDetection{
      [](const TrainConfig& c) { return c.data.format == DataFormat::image_folder && !annotatedTask(c.task.kind); },
      "data.format image_folder, task.kind not detection, segmentation or instance_segmentation"};
  // A table's columns: a CSV's, or an image folder's targets table's.
  const Rule tableColumns{[](const TrainConfig& c) {
                            return c.data.format == DataFormat::csv ||
                                   (c.data.format == DataFormat::image_folder && !c.data.targets_file.empty());
                          },
                          "a table's columns (data.format csv, or an image folder's data.targets_file)"};

  // The model and the data are what a checkpoint's weights are bound to: a
  // fork keeps them (the augmentations, the loss and a label threshold aside).
  add.forks = false;
  choices(add(SETTING(model.kind), model, "Architecture", T::Choice,
              "mlp: fully connected, fastest, also for tables; cnn: small conv net, a good default for images; "
              "resnet: residual blocks, most accurate and slowest; torchscript: your own model, saved in Python; "
              "resnet18, resnet34, resnet50, mobilenet_v3_small, mobilenet_v3_large, efficientnet_b0: torchvision's "
              "networks, with their names, to fine-tune from pretrained weights (model.weights). For boxes "
              "(task.kind detection), torchvision's detectors: fasterrcnn_mobilenet_v3_large_320_fpn, the "
              "fastest, and fasterrcnn_mobilenet_v3_large_fpn; fasterrcnn_resnet50_fpn_v2, the most accurate and "
              "several times slower; retinanet_resnet50_fpn_v2, single-stage (no proposals: one dense head with "
              "the focal loss), as slow; ssdlite320_mobilenet_v3_large, every image at 320 x 320, the lightest for "
              "phones and small machines. For a mask per box (task.kind instance_segmentation): "
              "maskrcnn_resnet50_fpn_v2, torchvision's Mask R-CNN. For a class per pixel (task.kind "
              "segmentation): lraspp_mobilenet_v3_large, deeplabv3_mobilenet_v3_large, deeplabv3_resnet50, "
              "fcn_resnet50."),
          modelKinds());
  when(range(add(SETTING(model.width), model, "Width", T::Int,
                 "Hidden units (mlp) or base channels (cnn, resnet); wider learns more but costs time and memory."),
             between(1, 4096)),
       builtIn);
  when(range(add(SETTING(model.depth), model, "Depth", T::Int,
                 "Hidden layers (mlp), conv stages (cnn) or residual blocks (resnet)."),
             between(1, 64)),
       builtIn);
  when(range(add(SETTING(model.dropout), model, "Dropout", T::Real,
                 "Fraction of features zeroed before the classifier while training; helps when the model overfits."),
             between(0, 1, false, true)),
       builtIn);
  when(
      add(SETTING(model.weights), model, "Pretrained weights", T::File,
          "A state dict to start from: a .pth as torchvision saves it (torchvision.models.resnet18(weights="
          "\"DEFAULT\") in Python downloads resnet18-f37072fd.pth to ~/.cache/torch/hub/checkpoints/), or a "
          ".safetensors file (timm publishes these). Read as data; nothing in it runs. Empty: torchvision's random "
          "initialisation. A detector takes a whole detector's state dict (COCO's: its class predictor replaced "
          "for the data's classes unless they match) or its backbone's classifier's (MobileNetV3's or "
          "ResNet-50's, into its backbone). With weights, a Faster R-CNN MobileNetV3 detector's backbone "
          "BatchNorm is frozen, as torchvision's builder does (model.detector.batchnorm: its own setting). A segmenter "
          "takes a segmenter's state dict (torchvision's COCO-with-VOC-labels weights: its class layers new for the "
          "data's classes unless they match) or its backbone's classifier's (ResNet-50's or MobileNetV3-Large's)."),
      Rule{[](const TrainConfig& c) {
             return isTorchvisionBackbone(c.model.kind) || isModel(c.model.kind, ModelFamily::detector) ||
                    isModel(c.model.kind, ModelFamily::segmenter);
           },
           "a torchvision model.kind (a classifier, a detector or a segmenter)"},
      true);
  when(add(SETTING(model.keep_head), model, "Keep the classifier", T::Bool,
           "Keep the weights' classifier (its number of classes must be the data's); off: a new classifier for the "
           "data's classes, initialised as torchvision does."),
       Rule{[](const TrainConfig& c) {
              return (isTorchvisionBackbone(c.model.kind) || isModel(c.model.kind, ModelFamily::segmenter)) &&
                     !c.model.weights.empty();
            },
            "a torchvision classifier or segmenter model.kind with model.weights"},
       true);
  when(add(SETTING(model.path), model, "TorchScript file", T::File,
           "A model saved in Python with torch.jit.script(model).save(path) or torch.jit.trace(...).save(path), "
           "taking a batch and giving one logit per class. Loading it runs its code: use files you trust."),
       Rule{[](const TrainConfig& c) { return isModel(c.model.kind, ModelFamily::torchscript); },
            "model.kind torchscript"},
       true);

  // What the run learns (train/tasks/): in the Data section, as it names
  // which columns are predicted.
  const Rule regression{[](const TrainConfig& c) { return c.task.kind == TaskKind::regression; },
                        "task.kind regression"};
  add(SETTING(task.kind), data, "Task", T::Choice,
      "classification: one class per example (cross-entropy, accuracy); regression: one or several "
      "numbers per example from a table's target columns (MSE, L1 or Huber; RMSE, MAE and R\u00b2); "
      "multilabel: any number of labels per example, from 0/1 columns or a column of tags "
      "(binary cross-entropy; mAP, F1); detection: boxes around the objects in images, from "
      "data.annotations (a detector's losses; COCO's mAP); segmentation: a class per pixel, from masks "
      "(cross-entropy per pixel; mean IoU); instance_segmentation: boxes with a mask each, from a COCO "
      "instances JSON's segmentations (Mask R-CNN's losses; COCO's box and mask mAP).");
  const Rule multilabel{[](const TrainConfig& c) { return c.task.kind == TaskKind::multilabel; },
                        "task.kind multilabel"};
  add.forks = true;  // how outputs are read and scored: a fork may change these
  when(range(add(SETTING(task.threshold), data, "Label threshold", T::Real,
                 "Multi-label: a label is predicted when its probability reaches this (the evaluation also "
                 "reports each label's threshold of best F1)."),
             between(0, 1, true, true)),
       multilabel);
  when(add(SETTING(task.tune_thresholds), data, "Tune thresholds", T::Bool,
           "Multi-label: each label's threshold becomes the one of its best F1 on the validation split at each "
           "evaluation; the test split, predictions and exports use them. Needs a validation fraction."),
       multilabel);
  add(SETTING(loss.kind), data, "Loss", T::Choice,
      "auto: cross_entropy for classification, mse for regression, bce for multilabel. Classification also "
      "takes focal "
      "(cross-entropy that down-weights easy examples). Regression also takes l1 (mean absolute "
      "error), huber and smooth_l1 (quadratic near 0, linear beyond loss.huber_delta: robust to outliers).");
  when(add(SETTING(loss.pos_weight), data, "Positive weights", T::Text,
           "Multi-label: none; balanced: each label's positives weighted by its negatives / positives in the "
           "training split; or one weight per label, comma-separated (binary_cross_entropy_with_logits' "
           "pos_weight)."),
       multilabel);
  const Rule classification{[](const TrainConfig& c) { return c.task.kind == TaskKind::classification; },
                            "task.kind classification"};
  when(range(add(SETTING(loss.focal_gamma), data, "Focal loss gamma", T::Real,
                 "How much focal loss down-weights examples the model already gets right: (1 - p)^gamma; 0 is "
                 "cross-entropy, 2 the usual choice."),
             atLeast(0)),
       Rule{[](const TrainConfig& c) { return c.loss.kind == LossKind::focal; }, "loss.kind focal"}, true);
  when(add(SETTING(loss.class_weights), data, "Class weights", T::Text,
           "none; balanced: each class weighted by n / (classes x its count) in the training split (rare classes "
           "count more); or one weight per class, comma-separated, in the classes' order."),
       classification);
  when(range(add(SETTING(loss.label_smoothing), data, "Label smoothing", T::Real,
                 "Share of each target spread evenly over the classes (e.g. 0.1): less over-confident models."),
             between(0, 1, false, true)),
       classification);
  when(range(add(SETTING(loss.huber_delta), data, "Huber delta / smooth L1 beta", T::Real,
                 "Where huber and smooth_l1 turn from quadratic to linear, in standardised target units when "
                 "targets are standardised."),
             above(0)),
       Rule{[](const TrainConfig& c) { return c.loss.kind == LossKind::huber || c.loss.kind == LossKind::smooth_l1; },
            "loss.kind huber or smooth_l1"},
       true);
  add.forks = false;  // the scale the weights learned in, and the data from here on
  when(add(SETTING(task.standardize_targets), data, "Standardise targets", T::Bool,
           "Train on targets scaled to mean 0 and std 1 on the training split (recorded and undone in figures, "
           "predictions and exports); helps when targets are large numbers such as prices."),
       regression);
  add(SETTING(data.format), data, "Format", T::Choice,
      "idx: MNIST-format files; image_folder: a folder with a sub-folder of images per class; "
      "csv: a table with one example per row.");
  when(add(SETTING(data.dataset), data, "Dataset", T::Choice, "Which MNIST-format dataset the folder holds."), idx,
       true);
  add(SETTING(data.root), data, "Data", T::DataPath,
      "idx: the folder with the train-/t10k- files (Debian: dataset-fashion-mnist); image_folder: the folder of class "
      "folders (or of train/, test/ and val/ with class folders); csv: the table file.")
      .picksFile = csv.test;
  when(add(SETTING(data.train_file), data, "Training table", T::File,
           "A separate training table (instead of the file in Data), when training and test rows come in two files."),
       csv, true);
  when(add(SETTING(data.test_file), data, "Test table", T::File,
           "The test rows; without it, the test fraction of each class is held out of the table."),
       csv, true);
  when(add(SETTING(data.label_column), data, "Label column", T::Text,
           "The column holding the class (or a multi-label row's tags): its header name or 0-based index; empty: "
           "the last column (a classifier's labels file on an image folder: the column named label, else the "
           "second)."),
       tableColumns, true);
  when(add(SETTING(data.target_columns), data, "Target columns", T::TextList,
           "Regression: the columns to predict; multi-label: the 0/1 columns, one per label (names or 0-based "
           "indices, comma-separated). Empty: the label column (the last column when that is empty); for "
           "multi-label it then holds each row's tags. Image folders: columns of the targets table."),
       tableColumns, true)
      .noEffect = [](const TrainConfig& c) -> std::string {
    if (c.task.kind != TaskKind::classification || c.data.target_columns.empty()) return "";
    return "has no effect under task.kind " + c.task.kind +
           ": data.label_column names the class column; set task.kind to regression to predict these columns";
  };
  when(add(SETTING(data.targets_file), data, "Targets table", T::File,
           "Images in one folder with their targets in a CSV table (its first row names the columns) whose first "
           "column names each image (relative to Data). Regression or multi-label: the other columns hold its "
           "values, 0/1 labels or tags. Classification: a labels file (the Label tab's file,label,made_by); "
           "images without a label are left out, and the test images are chosen by name, so that a training on "
           "more labels tests on the same images as before."),
       Rule{[](const TrainConfig& c) {
              return c.data.format == DataFormat::image_folder && !annotatedTask(c.task.kind);
            },
            "data.format image_folder, task.kind not detection, segmentation or instance_segmentation"},
       true);
  when(add(SETTING(data.tag_separator), data, "Tag separator", T::Text,
           "Multi-label from one column of tags: what separates a row's tags (\"cat|outdoor\")."),
       Rule{[](const TrainConfig& c) { return c.task.kind == TaskKind::multilabel && c.data.target_columns.empty(); },
            "task.kind multilabel without data.target_columns"});
  when(add(SETTING(data.ignore_columns), data, "Ignored columns", T::TextList,
           "Columns that are neither features nor the label (ids, free text): names or indices, comma-separated."),
       csv, true);
  when(add(SETTING(data.image_size), data, "Image size (HxW)", T::Size,
           "Every image is resized to HEIGHTxWIDTH when it is loaded (antialiased bilinear); auto: the first image's "
           "size (224x224 for a torchvision backbone, the size its pretrained weights were trained at)."),
       folderNotDetection, true);
  when(range(add(SETTING(data.stored_size), data, "Stored size (shorter side, px)", T::Int,
                 "The size images are decoded and cached at. Above the image size, each image keeps its shape: "
                 "its shorter side is resized to this and the centre cut square (the image size's shape); training "
                 "crops from it (random resized crop, or the centre) and evaluation and prediction take the centre at "
                 "the image size, torchvision's Resize(256) + CenterCrop(224). 0: 8/7 of the image size for a "
                 "torchvision backbone (256 for 224), else the image size itself, images squashed to it."),
             between(0, 4096)),
       folderNotDetection, true);
  when(range(add(SETTING(data.channels), data, "Channels", T::Int,
                 "1: grayscale, 3: RGB (images of the other kind are converted); 0: as the first image."),
             between(0, 3)),
       folder, true);
  when(range(add(SETTING(data.test_fraction), data, "Test fraction", T::Real,
                 "Share of each class held out for testing (stratified, seeded) when there is no test folder or "
                 "test table (nor a YOLO data.yaml's test:)."),
             between(0, 0.9)),
       Rule{[](const TrainConfig& c) { return c.data.format != DataFormat::idx; }, "data.format image_folder or csv"},
       true);
  when(add(SETTING(data.on_bad_file), data, "Unreadable images", T::Choice,
           "fail: stop at the first image that cannot be read; skip: leave such images out (counted, and "
           "the first ones named in the log)."),
       folder, true);
  range(add(SETTING(data.train_limit), data, "Training examples (0: all)", T::Int,
            "Train on only the first N examples; for quick trials of settings."),
        atLeast(0));
  range(add(SETTING(data.test_limit), data, "Test examples (0: all)", T::Int,
            "Evaluate on only the first N test examples."),
        atLeast(0));
  range(add(SETTING(data.val_fraction), data, "Validation fraction", T::Real,
            "Share of each class of the training examples held out for evaluation during the run, so the test set "
            "stays unseen. Not used with a val/ folder or a YOLO data.yaml's val:."),
        between(0, 0.9));
  range(add(SETTING(data.cv_folds), data, "Cross-validation folds (0: off)", T::Int,
            "Cross-validation, as the audit runs it: the training examples (after the validation split) are dealt "
            "into this many stratified, seeded folds; the run trains on all but one (data.cv_fold) and tests on "
            "that one. The test split is not used while it is on. 0: off."),
        between(0, 20));
  when(range(add(SETTING(data.cv_fold), data, "Cross-validation fold", T::Int,
                 "Which fold (1 to data.cv_folds) the run tests on; the others are trained on."),
             between(0, 20)),
       Rule{[](const TrainConfig& c) { return c.data.cv_folds > 0; }, "data.cv_folds above 0"}, true);
  when(add(SETTING(data.corrections), data, "Corrections (CSV)", T::File,
           "A corrections.csv of the audit's review (columns file, action, label): each listed image (or a "
           "table's row, \"train.csv row 17\") is relabelled (to label, a class), removed from every split, or "
           "kept; your files are not touched. The splits are drawn first, so a file stays in its split."),
       folderOrTable, true);
  when(add(SETTING(data.sampler), data, "Sampler", T::Choice,
           "shuffle: every training example once per epoch; balanced: each epoch draws as many examples with "
           "replacement, every class equally often (for imbalanced classes; seeded)."),
       classification);
  add(SETTING(data.normalize), data, "Normalise", T::Bool,
      "Images: subtract each channel's training mean and divide by its std; tables: standardise each feature. "
      "Almost always helps optimisation.")
      .noEffect = [](const TrainConfig& c) -> std::string {
    if (!boxesTask(c.task.kind) || c.data.normalize) return "";
    return "has no effect under task.kind " + c.task.kind.name() +
           ": the detector normalises each image with ImageNet's mean and "
           "std itself, as torchvision's GeneralizedRCNNTransform does";
  };
  when(add(SETTING(data.normalize_stats), data, "Normalise with", T::Choice,
           "Whose per-channel mean and std: auto: ImageNet's (mean 0.485, 0.456, 0.406; std 0.229, 0.224, "
           "0.225) for a torchvision backbone started from model.weights, as the weights were trained, "
           "else the training split's; data: the training split's; imagenet: ImageNet's (3-channel "
           "images)."),
       Rule{[](const TrainConfig& c) {
              return c.data.normalize && c.data.format != DataFormat::csv && !annotatedTask(c.task.kind);
            },
            "data.normalize on images, task.kind not detection, segmentation or instance_segmentation (a segmenter's "
            "images take "
            "ImageNet's, as torchvision's references normalise them)"},
       true);
  addDetectionSettings(add);
  addSegmentationSettings(add);
  addAugmentSettings(add);
  addRunSettings(add);
  return f;
}

}  // namespace

bool NumberRange::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool aboveLo = loOpen ? v > lo : v >= lo;
  const bool belowHi = std::isinf(hi) ? true : (hiOpen ? v < hi : v <= hi);
  return aboveLo && belowHi;
}

std::string NumberRange::rule() const {
  if (std::isinf(hi)) return std::string("must be ") + (loOpen ? "> " : ">= ") + num(lo);
  return std::string("must be in ") + (loOpen ? "(" : "[") + num(lo) + ", " + num(hi) + (hiOpen ? ")" : "]");
}

const std::vector<FieldSpec>& settingsSchema() {
  static const std::vector<FieldSpec> schema = makeSchema();
  return schema;
}

const std::vector<std::string>& settingsGroups() {
  static const std::vector<std::string> groups = {"Model",       "Data",       "Training",
                                                  "Optimizer",   "Schedule",   "Precision & memory",
                                                  "Performance", "Evaluation", "Output"};
  return groups;
}

const FieldSpec* findSetting(const std::string& path) {
  for (const auto& s : settingsSchema())
    if (s.path == path) return &s;
  return nullptr;
}

bool settingForkable(const std::string& path) {
  const FieldSpec* spec = findSetting(path);
  return spec && spec->forks;
}

bool settingSearchable(const FieldSpec& spec) {
  return spec.type == FieldType::Int || spec.type == FieldType::Real || spec.type == FieldType::Choice ||
         spec.type == FieldType::Bool;
}

bool settingApplies(const FieldSpec& spec, const TrainConfig& config) { return !spec.applies || spec.applies(config); }

std::string jsonPointer(const std::string& dotted) {
  std::string p = "/" + dotted;
  for (char& c : p)
    if (c == '.') c = '/';
  return p;
}

}  // namespace studio
