#pragma once
// TrainConfig: every setting of a training run, as one plain struct.
// The form, the CLI and the JSON files all go through validate() and the JSON
// functions here. Torch-free: the UI includes this header.
// Thread: plain data; copy it to hand it to another thread.

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "studio/choice.h"
#include "studio/errors.h"

namespace studio {

// The choice settings' values, each list in the order the form offers them
// (studio/choice.h: the names are the enumerators', a trailing _ dropped).
STUDIO_CHOICE(TaskKind, classification, regression, multilabel, detection, segmentation, instance_segmentation)
STUDIO_CHOICE(AnnotationFormat, auto_, coco, yolo, voc)
STUDIO_CHOICE(OnBadBox, fail, clip, skip)
STUDIO_CHOICE(DetectorNorm, auto_, frozen, trainable)
STUDIO_CHOICE(LossKind, auto_, cross_entropy, focal, bce, mse, l1, huber, smooth_l1)
STUDIO_CHOICE(DataFormat, idx, image_folder, csv)
// The MNIST-format sets: their names hold a '-', so they are spelt out.
enum class IdxDataset { fashion_mnist, mnist };
inline constexpr std::array<std::string_view, 2> kIdxDatasetNames{"fashion-mnist", "mnist"};
constexpr const auto& choiceNames(IdxDataset) { return kIdxDatasetNames; }
STUDIO_CHOICE(OnBadFile, fail, skip)
STUDIO_CHOICE(NormalizeStats, auto_, data, imagenet)
STUDIO_CHOICE(SamplerKind, shuffle, balanced)
STUDIO_CHOICE(AugmentPolicy, none, randaugment, trivialaugment)
STUDIO_CHOICE(BetterIs, auto_, min, max)
STUDIO_CHOICE(OnNonfinite, stop, skip, rollback)
STUDIO_CHOICE(OptimizerKind, sgd, adam, adamw)
STUDIO_CHOICE(OneCycleAnneal, cos, linear)
STUDIO_CHOICE(CyclicMode, triangular, triangular2, exp_range)
STUDIO_CHOICE(ScheduleKind, constant, step, cosine, linear, onecycle, cyclic)
STUDIO_CHOICE(PrecisionMode, fp32, fp16, bf16)
STUDIO_CHOICE(CudaGraphs, auto_, on, off)
STUDIO_CHOICE(ActivationCheckpointing, off, auto_, every)
STUDIO_CHOICE(BatchNormSync, local, sync)
STUDIO_CHOICE(LoaderMode, auto_, device, workers)

// Version 2 added data.format (image folders, CSV tables) and TorchScript
// models; version-1 files read as version 2 unchanged (they are IDX runs).
inline constexpr int kConfigSchemaVersion = 2;

struct ModelConfig {
  // mlp | cnn | resnet | torchscript, or one of torchvision's classifiers
  // (torchvisionBackbones(): resnet18, ..., efficientnet_b0)
  std::string kind = "cnn";
  int width = 32;        // hidden units (mlp) or base channels (cnn, resnet)
  int depth = 2;         // hidden layers (mlp), conv stages (cnn), residual blocks (resnet)
  double dropout = 0.0;  // before the classifier
  std::string path;      // torchscript: the file torch.jit.save wrote
  // A torchvision backbone: a state dict to start from (.pth as torchvision
  // saves it, or .safetensors); "": torchvision's initialisation.
  std::string weights;
  // Keep the weights' classifier (its class count must be the data's);
  // false: a new classifier for the data's classes.
  bool keep_head = false;
  // A detector's (task.kind detection) transform and post-processing, as
  // torchvision's builder keywords: 0 for a size is the model's own
  // (fasterrcnn_mobilenet_v3_large_320_fpn: 320 and 640; the others: 800
  // and 1333).
  struct Detector {
    int64_t min_size = 0;                // each image's shorter side
    int64_t max_size = 0;                // ... unless its longer side would pass this
    double score_threshold = 0.05;       // box_score_thresh
    double nms_iou = 0.5;                // box_nms_thresh
    int64_t detections_per_image = 100;  // box_detections_per_img
    // Proposals sampled per image to train the box heads on (box_batch_size_per_image).
    int64_t rois_per_image = 512;
    // The Faster R-CNN MobileNetV3 backbone's BatchNorm: frozen
    // (FrozenBatchNorm2d), trainable (BatchNorm2d), or auto: frozen with
    // model.weights, as torchvision's builder does with trained weights.
    Choice<DetectorNorm> batchnorm = DetectorNorm::auto_;
  } detector;
  // A segmenter's (task.kind segmentation) sizes and auxiliary head, as
  // torchvision's references/segmentation: training resizes each image's
  // shorter side to a random size in [base_size / 2, 2 x base_size], then
  // crops crop_size x crop_size (padded where smaller); evaluation resizes
  // the shorter side to base_size.
  struct Segmenter {
    int64_t base_size = 520;
    int64_t crop_size = 480;
    // The auxiliary head (torchvision's aux_loss): its loss counts 0.5 in training.
    bool aux_loss = false;
  } segmenter;
};

// model.kind values that are torchvision's classifiers.
const std::vector<std::string>& torchvisionBackbones();
bool isTorchvisionBackbone(const std::string& kind);

// What the run learns (studio: train/tasks/): the model's outputs, the loss
// and the figures of an evaluation.
struct TaskConfig {
  // classification: one class per example (cross-entropy, accuracy);
  // regression: one or several numbers per example (data.target_columns);
  // multilabel: any number of labels per example (several 0/1 columns in
  // data.target_columns, or one column of tags separated by
  // data.tag_separator); detection: boxes (data.annotations);
  // segmentation: a class per pixel (masks in data.annotations);
  // instance_segmentation: boxes with a mask each (a COCO instances JSON's
  // segmentations in data.annotations; Mask R-CNN).
  Choice<TaskKind> kind = TaskKind::classification;
  // multilabel: a label is predicted when its probability reaches this.
  double threshold = 0.5;
  // multilabel: each validation evaluation sets each label's threshold to
  // the one of its best F1 there; the test split, predictions and exports
  // then use those (thresholds.json in the run folder).
  bool tune_thresholds = false;
  // regression: train on targets standardised with the training split's
  // mean and std (recorded; predictions and figures are in the data's units).
  bool standardize_targets = true;
};

// Detection and segmentation: images whose labels are boxes or masks
// (data.annotations); the task sizes, augments and normalises each image
// itself, with its labels, so the classifier's image settings do not apply.
// Detection and instance segmentation: boxes per image, a detector's
// losses, COCO's figures; the second adds a mask to each box.
inline bool boxesTask(TaskKind kind) { return kind == TaskKind::detection || kind == TaskKind::instance_segmentation; }
inline bool boxesTask(const Choice<TaskKind>& kind) { return boxesTask(kind.value()); }
inline bool annotatedTask(TaskKind kind) { return boxesTask(kind) || kind == TaskKind::segmentation; }
inline bool annotatedTask(const Choice<TaskKind>& kind) { return annotatedTask(kind.value()); }

// The loss the step minimises, as torch.nn.functional's losses.
struct LossConfig {
  // auto: cross_entropy for classification, mse for regression, bce
  // (binary cross-entropy with logits) for multilabel. focal:
  // cross-entropy scaled by (1 - p)^focal_gamma (Lin et al. 2017), for
  // classes that are rare or hard.
  Choice<LossKind> kind = LossKind::auto_;
  double huber_delta = 1.0;  // huber: delta; smooth_l1: beta
  double focal_gamma = 2.0;  // focal
  // Classification: none | balanced (inverse class frequency, as
  // scikit-learn's compute_class_weight) | one weight per class ("1, 4.5").
  std::string class_weights = "none";
  double label_smoothing = 0.0;  // cross_entropy: as torch.nn.functional.cross_entropy's
  // Multilabel (bce): none | balanced (each label's negatives / positives
  // in the training split) | one weight per label; as
  // binary_cross_entropy_with_logits' pos_weight.
  std::string pos_weight = "none";
};

struct DataConfig {
  Choice<DataFormat> format = DataFormat::idx;
  Choice<IdxDataset> dataset = IdxDataset::fashion_mnist;  // idx: which MNIST-format set
  // idx and image_folder: the folder; csv: the table (unless train_file is set).
  std::string root = "/usr/share/datasets/fashion-mnist";
  std::string train_file;                   // csv: the training table (instead of root)
  std::string test_file;                    // csv: a separate test table
  std::string label_column;                 // csv: a column name or 0-based index; "": the last column
  std::vector<std::string> ignore_columns;  // csv: columns that are not features
  // csv, task.kind regression: the columns to predict (names or 0-based
  // indices); empty: data.label_column (the last column when that is empty).
  std::vector<std::string> target_columns;
  // csv, task.kind multilabel without target_columns: what separates the
  // tags in the label column's cells ("cat|outdoor").
  std::string tag_separator = "|";
  // image_folder, task.kind regression or multilabel: a CSV table (its
  // first row names the columns) whose first column names each image
  // (relative to data.root) and whose other
  // columns are its targets (data.target_columns; regression: all of them
  // when empty) or its tags (data.label_column; the last column when empty).
  std::string targets_file;
  std::vector<int64_t> image_size = {0, 0};  // image_folder: [height, width]; [0, 0]: the first image's
  // image_folder: the stored (cached) images' shorter side, at least the
  // image size's: each image keeps its aspect, is resized to it and
  // centre-cropped; training crops from it, evaluation and prediction take
  // the centre at the image size (torchvision's Resize(256) + CenterCrop(224)).
  // 0: the image size x 8/7 for a torchvision backbone (256 for 224), else
  // the image size itself, images squashed to it.
  int64_t stored_size = 0;
  int channels = 0;                                 // image_folder: 1 or 3; 0: from the files
  double test_fraction = 0.2;                       // held out for testing when there is no test folder or file
  Choice<OnBadFile> on_bad_file = OnBadFile::fail;  // image_folder: fail or skip an unreadable image
  int64_t train_limit = 0;                          // use only the first N training examples (0: all)
  int64_t test_limit = 0;                           // use only the first N test examples (0: all)
  double val_fraction = 0.0;                        // held out of the training examples for validation
  // Cross-validation (training-studio-cli audit): with cv_folds K >= 2 the
  // training examples (after the validation split) are dealt into K
  // stratified, seeded folds; the run tests on fold cv_fold (1..K) and
  // trains on the others, and the test split is not used. 0: off.
  int cv_folds = 0;
  int cv_fold = 0;
  // image_folder: a corrections.csv (file, action, label) of the audit's
  // review: files left out, labels changed, the files untouched
  // (studio/corrections.h). Empty: none.
  std::string corrections;
  // task.kind detection (studio/box_annotations.h): the boxes, in a COCO
  // instances JSON, a YOLO data.yaml or a folder of Pascal VOC XML files,
  // of images under data.root; the format detected (auto) or named. A
  // separate test set: test_annotations, its images under test_root
  // (empty: data.root); without it, data.test_fraction of the images.
  std::string annotations;
  Choice<AnnotationFormat> annotation_format = AnnotationFormat::auto_;
  Choice<OnBadBox> on_bad_box = OnBadBox::fail;  // a box past its image: fail, clip or skip it
  // A split with a larger share of images without a box is warned about, with its counts (1: never).
  double warn_images_without_boxes = 0.5;
  std::string test_annotations;
  std::string test_root;
  // task.kind segmentation (studio/segmentation_files.h): the mask value
  // that no class has (VOC's borders), left out of the loss and the
  // figures; and the classes' names, mask value 0 first ("background,
  // road, car"); empty: a classes.txt beside the masks (a name a line), or
  // VOC's 21 for its layout.
  int64_t ignore_index = 255;
  std::vector<std::string> class_names;
  bool normalize = true;  // images: per-channel mean/std; tables: standardise each feature
  // Images: whose mean/std. auto: ImageNet's for a torchvision backbone with
  // model.weights (what the weights were trained with), else the training
  // split's | data | imagenet
  Choice<NormalizeStats> normalize_stats = NormalizeStats::auto_;
  // shuffle: each example once per epoch; balanced (classification): an
  // epoch of as many examples drawn with replacement, each with weight
  // 1 / its class's count (every class equally often), seeded.
  Choice<SamplerKind> sampler = SamplerKind::shuffle;
  bool augment_flip = false;  // random horizontal flip (detection: the boxes follow)
  // task.kind detection: transforms.v2's box-aware augmentations
  // (data/box_augment.h): RandomPhotometricDistort, RandomZoomOut,
  // RandomIoUCrop.
  bool augment_photometric = false;
  bool augment_zoom_out = false;
  bool augment_iou_crop = false;
  int augment_crop = 0;  // random crop after zero padding of this many pixels
  // torchvision.transforms.v2's, with their defaults (data/augment.h):
  bool augment_resized_crop = false;                                   // RandomResizedCrop to data.image_size
  double augment_crop_scale_min = 0.08, augment_crop_scale_max = 1.0;  // of the image's area
  double augment_crop_ratio_min = 3.0 / 4.0, augment_crop_ratio_max = 4.0 / 3.0;  // width / height
  bool augment_vflip = false;                                                     // RandomVerticalFlip
  double augment_rotation = 0;                                                    // RandomRotation: degrees either way
  double augment_brightness = 0, augment_contrast = 0, augment_saturation = 0, augment_hue = 0;  // ColorJitter
  double augment_erasing = 0;  // RandomErasing's probability
  // RandAugment or TrivialAugmentWide (torchvision.transforms.v2) after the
  // flips: none | randaugment | trivialaugment; RandAugment's num_ops and
  // magnitude, and both policies' num_magnitude_bins.
  Choice<AugmentPolicy> augment_policy = AugmentPolicy::none;
  int augment_policy_ops = 2;
  int augment_policy_magnitude = 9;
  int augment_policy_bins = 31;
  // Classification: MixUp and CutMix (torchvision.transforms.v2) on each
  // training batch, the targets mixed alike; with both, CutMix for a batch
  // with probability mix_switch_prob.
  bool augment_mixup = false;
  double mixup_alpha = 1.0;  // Beta(alpha, alpha)
  bool augment_cutmix = false;
  double cutmix_alpha = 1.0;
  double mix_switch_prob = 0.5;
};

// Ends the run when the evaluation metric has not improved for `patience`
// evaluations in a row (an improvement beats the best by more than min_delta).
struct EarlyStoppingConfig {
  std::string metric = "off";               // off | eval_loss | eval_accuracy
  Choice<BetterIs> mode = BetterIs::auto_;  // auto: min for a loss, max for an accuracy
  int patience = 5;                         // evaluations without improvement
  double min_delta = 0.0;
};

// An exponential moving average of the weights (and BatchNorm's running
// statistics), evaluated beside them: after every `every_steps` optimizer
// steps from `start_step` on, avg = decay * avg + (1 - decay) * weights (the
// first update copies), as torch.optim.swa_utils.AveragedModel with
// get_ema_multi_avg_fn(decay) and use_buffers=True.
struct EmaConfig {
  double decay = 0.0;  // 0: off; e.g. 0.999
  int64_t every_steps = 1;
  int64_t start_step = 0;
};

// The most optimizer steps a run may plan: 1e9 steps of 0.1 ms each (a
// small model's) take 28 hours; more is a mistake, not a plan.
inline constexpr int64_t kMaxPlannedSteps = 1'000'000'000;

// Fine-tuning (train/finetune.h): the model's parameters in layer groups
// from the input to the classifier (the head, the last group).
struct FinetuneConfig {
  // Epochs that train the head alone (0: every group trains from the start).
  int freeze_epochs = 0;
  // While a group is frozen its BatchNorm layers keep their running
  // statistics (evaluation mode); false: they follow the data.
  bool freeze_batchnorm = true;
  // The first group's learning rate as a factor of the head's; the groups
  // between take the geometric steps (fastai's slice(lr * f, lr)). 1: one rate.
  double backbone_lr_factor = 1.0;
  // After the frozen epochs, one more group (from the head down) each epoch
  // (ULMFiT's gradual unfreezing), instead of all at once.
  bool gradual = false;
  // TorchScript models: the parameters whose names start with this are the
  // head; "": the last group (of the first name component).
  std::string head_prefix;
};

struct TrainingConfig {
  int epochs = 3;               // 0: max_steps alone decides
  int64_t max_steps = 0;        // optimizer steps; 0: epochs decide; else the first of the two ends the run
  int batch_size = 128;         // micro-batch size
  int accumulation_steps = 1;   // micro-batches per optimizer step
  double grad_clip_norm = 0.0;  // clip the global L2 norm; 0: off
  uint64_t seed = 1;
  int log_every_steps = 10;  // how often metrics leave the device (one host sync)
  // A step whose loss or gradients are not finite is never applied. Then:
  // stop the run (failed, the last checkpoint kept), skip it and go on, or
  // roll back to the last checkpoint with the learning rate scaled down.
  Choice<OnNonfinite> on_nonfinite = OnNonfinite::stop;
  double rollback_lr_factor = 0.5;  // rollback: learning-rate multiplier per rollback
  int max_rollbacks = 3;            // rollback: then the run stops
  EarlyStoppingConfig early_stopping;
  EmaConfig ema;
  FinetuneConfig finetune;
};

struct OptimizerConfig {
  Choice<OptimizerKind> kind = OptimizerKind::sgd;
  double lr = 0.05;
  double weight_decay = 0.0;
  double momentum = 0.9;  // sgd
  bool nesterov = false;  // sgd
  double beta1 = 0.9;     // adam, adamw
  double beta2 = 0.999;
  double eps = 1e-8;
};

struct StepScheduleConfig {
  int64_t step_size = 1000;
  double gamma = 0.1;
};
struct CosineScheduleConfig {
  int64_t t_max = 0;
  double eta_min = 0.0;
};  // t_max 0: the run's steps
struct LinearScheduleConfig {
  double start_factor = 1.0 / 3.0;
  double end_factor = 1.0;
  int64_t total_iters = 5;
};
struct OneCycleScheduleConfig {
  double max_lr = 0.1;
  int64_t total_steps = 0;  // 0: the run's optimizer steps
  double pct_start = 0.3;
  Choice<OneCycleAnneal> anneal = OneCycleAnneal::cos;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
};
struct CyclicScheduleConfig {
  double base_lr = 0.001;
  double max_lr = 0.1;
  int64_t step_size_up = 2000;
  int64_t step_size_down = 0;  // 0: same as up
  Choice<CyclicMode> mode = CyclicMode::triangular;
  double gamma = 1.0;  // exp_range
  bool cycle_momentum = true;
  double base_momentum = 0.8;
  double max_momentum = 0.9;
};

struct ScheduleConfig {
  Choice<ScheduleKind> kind = ScheduleKind::constant;
  int64_t warmup_steps = 0;  // linear warm-up before the schedule (not with onecycle/cyclic)
  double warmup_start_factor = 0.1;
  StepScheduleConfig step;
  CosineScheduleConfig cosine;
  LinearScheduleConfig linear;
  OneCycleScheduleConfig onecycle;
  CyclicScheduleConfig cyclic;
};

struct LossScaleConfig {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
};

struct PrecisionConfig {
  Choice<PrecisionMode> mode = PrecisionMode::fp32;
  LossScaleConfig loss_scale;  // fp16 only
};

struct PerformanceConfig {
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  bool cudnn_benchmark = true;
  bool tf32 = true;
  bool channels_last = false;
  bool zero_grad_to_none = true;
  // The whole optimizer step as one CUDA graph: auto (when it can be
  // captured; otherwise eager, with the reason logged) | on (an error when it
  // cannot) | off.
  Choice<CudaGraphs> cuda_graphs = CudaGraphs::auto_;
  int threads = 0;  // CPU intra-op threads; 0: all cores
};

// Memory techniques.
struct MemoryConfig {
  // Recompute activations in the backward pass instead of keeping them (Chen
  // et al. 2016): off | auto (segments of about sqrt(blocks) blocks) | every
  // (segments of checkpoint_blocks blocks). Built-in models only.
  Choice<ActivationCheckpointing> activation_checkpointing = ActivationCheckpointing::off;
  int checkpoint_blocks = 2;
  // An out-of-memory error during a step halves the micro-batch and doubles
  // the accumulation (the same effective batch and schedule); the run goes on.
  bool oom_backoff = true;
  // CPU only: the most tensor memory (MiB) the run may allocate after loading
  // its data (0: no limit); past it, an out-of-memory error as on a GPU.
  int64_t cpu_limit_mib = 0;
};

// Data parallelism, for a run started by torchrun in several processes (one
// per GPU): ignored by a run of its own.
struct DistributedConfig {
  // A collective that waits longer than this (a rank stopped or hangs)
  // fails the run with a message, instead of hanging.
  int timeout_s = 300;
  // Gradients are summed over the ranks in buckets of about this size, each
  // started as soon as the backward pass has filled it.
  int bucket_mib = 25;
  // BatchNorm: local (each process normalises with its own share of the
  // batch; the running statistics are averaged over the processes at each
  // evaluation and checkpoint) | sync (with the statistics of the whole
  // global batch, as one process would: PyTorch's SyncBatchNorm; built-in
  // models).
  Choice<BatchNormSync> batchnorm = BatchNormSync::local;
  // The window's runs in several processes (it starts torchrun with the
  // CLI): "" (one process, in the window) or a list, one process each: GPU
  // indices ("0,1") or "cpu" ("cpu,cpu"). The CLI ignores it (torchrun
  // decides there).
  std::string devices;
};

// distributed.devices as a list ("0,1" -> {"0", "1"}); empty for "".
std::vector<std::string> processDevices(const std::string& devices);

struct LoaderConfig {
  Choice<LoaderMode> mode = LoaderMode::auto_;
  int workers = 2;
  int prefetch = 4;  // batches ready ahead, per worker
  bool pin_memory = true;
};

struct EvaluationConfig {
  int64_t every_steps = 0;  // 0: at the end of each epoch
  int batch_size = 1000;
};

struct OutputConfig {
  std::string dir = "runs";
  int64_t checkpoint_every_steps = 0;  // 0: at evaluations only
  bool save_best = true;
  // Keep each evaluation's checkpoint as checkpoints/step-<N>.ckpt too, so a
  // fork can start from any of them (fork --from step-N).
  bool keep_checkpoints = false;
};

struct TrainConfig {
  int schema_version = kConfigSchemaVersion;
  std::string name = "run";
  TaskConfig task;
  LossConfig loss;
  ModelConfig model;
  DataConfig data;
  TrainingConfig train;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  PrecisionConfig precision;
  PerformanceConfig performance;
  MemoryConfig memory;
  DistributedConfig distributed;
  LoaderConfig loader;
  EvaluationConfig evaluation;
  OutputConfig output;
};

// One problem with one field: "optimizer.lr" and "must be > 0 (got -1)".
struct ConfigError {
  std::string field;
  std::string message;
  std::string text() const { return field.empty() ? message : field + " " + message; }
};

// Every error in the settings, each with its field path and the bad value.
std::vector<ConfigError> validate(const TrainConfig& config);

nlohmann::json toJson(const TrainConfig& config);
// Reads settings; missing keys keep their defaults, unknown keys, wrong types
// and whole numbers out of their type's range are errors (appended to errors,
// with their path). A version-1 document reads as version 2.
TrainConfig configFromJson(const nlohmann::json& json, std::vector<ConfigError>& errors);

// The settings that differ between a and b, flattened:
// {"optimizer.lr": [a's value, b's value]} (name and output.dir are left
// out: they are not settings of the training). As --set assignments:
// "optimizer.lr=0.01".
nlohmann::json settingsChanges(const TrainConfig& a, const TrainConfig& b);
std::vector<std::string> settingsAssignments(const nlohmann::json& changes);

// Loading and saving files; throws ConfigFileError (IoError when writing
// fails) naming the file and problem.
TrainConfig loadConfigFile(const std::string& path);
void saveConfigFile(const TrainConfig& config, const std::string& path);
// "optimizer.lr=0.1": value parsed as JSON, else taken as a string.
void applyOverride(TrainConfig& config, const std::string& assignment);
// A run name that says what the settings train: the data (the dataset, the
// image folder's or the table's name) and the model (its kind, or the
// TorchScript file's name), e.g. "digits-cnn", "breast-cancer-mlp"; a valid
// `name` (at most 100 characters, no '/' and no leading '.').
std::string suggestedRunName(const TrainConfig& config);

}  // namespace studio
