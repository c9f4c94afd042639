#pragma once
// What a trained model says about new files: a run folder's checkpoint, or an
// export folder (training-studio-cli export), fed images or a table exactly
// as its run fed its data (the image size and channels, the normalisation,
// the feature columns by name), batched on the device. One flow for every
// task kind: what a prediction is (a class, values, labels, boxes) is the
// run's task's (engine/src/predict/predict_task.h), in one report type.
//
// Inputs: one image file; a folder (its images, in its sub-folders too, sorted
// by path; a file under a folder named as one of the run's classes is
// labelled with that class, so a class-folder layout gives the accuracy and
// the confusion matrix); or a CSV table with the run's feature columns (its
// label column, when present, labels the rows).
//
// Speed: worker threads decode and resize the images into pinned batches
// while the device runs the one before; outputs stay on the device until the
// batch after next has been issued (no per-batch host sync).
//
// Grad-CAM (Selvaraju et al. 2017): the gradient of a class's logit with
// respect to the activations of the model's last convolutional stage,
// averaged over the positions as each channel's weight, the weighted sum of
// the activations through a ReLU, upsampled bilinearly to the input's size
// and scaled to [0, 1] by its maximum.
//
// Torch-free. Thread: a Predictor is used by one thread at a time (it runs
// its own decoding workers); the window runs it off the UI thread.

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "studio/coco_mask.h"
#include "studio/mask_file.h"
#include "studio/run_layout.h"  // WeightsChoice
#include "studio/segmentation_figures.h"
#include "studio/train_config.h"  // TaskKind

namespace studio {

// predict --tta (PredictOptions::tta).
STUDIO_CHOICE_NAMED(TestTimeAugmentation, "none, flip, five-crop", none, flip, five_crop)

struct PredictOptions {
  // auto: the weights the run's test figures are of (summary.json's
  // test_weights: the best checkpoint's for a run with a validation split,
  // else the last); best | last | ema (of a run folder; an export holds one).
  Choice<WeightsChoice> which = WeightsChoice::auto_;
  int64_t topK = 5;
  // Test-time augmentation, probabilities averaged on the device:
  //  none;
  //  flip: the image's and its horizontal mirror's;
  //  five-crop: the image resized to 8/7 of the input's size (as 256 for
  //    224), then its four corners' and its centre's crops of the input's
  //    size (torchvision's FiveCrop); for images larger than the input only
  //    (a smaller one is refused, or skipped with its reason).
  Choice<TestTimeAugmentation> tta = TestTimeAugmentation::none;
  int64_t batchSize = 256;
  int workers = 0;              // decoding threads; 0: one per core
  bool skipBad = false;         // a file or row that cannot be read is a row with its reason, the others go on
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  // Images, a classifier, no TTA: also each image's penultimate features
  // (PredictionReport::features; the audit's feature space). A model whose
  // layers the studio does not know (TorchScript) gives none.
  bool penultimate = false;
  // A segmenter's (task.kind segmentation, studio/mask_predict.h): the
  // folder each image's index PNG mask is written to, at the input's
  // relative path and stem ("": none written).
  std::string masksDir{};
  // A segmenter's: each row's mask kept in the report (PredictionReport::masks), for the window.
  bool keepMasks = false;
};

// A detector's box (task.kind detection, studio/box_predict.h).
struct PredictedBox {
  double x = 0, y = 0, width = 0, height = 0;  // pixels of the image as stored, COCO's [x, y, w, h]
  double score = 0;
  int64_t label = 0;  // into PredictionReport::classes
  // task.kind instance_segmentation: the box's mask in the image as stored
  // (the row's height x width).
  std::optional<Rle> mask{};
};

struct PredictionRow {
  std::string source;              // the file, or "row N" (as a spreadsheet numbers it)
  int64_t label = -1;              // the known class (class folder, label column); -1 unknown
  std::vector<int64_t> top;        // class indices, most probable first
  std::vector<float> probability;  // of each in top
  std::string error;               // why it was skipped ("" when predicted)
  // A detector's: the file's path under the input folder (a single file:
  // its name), its annotations' image id (-1 without annotations), its size
  // as stored, and its boxes by score, highest first.
  std::string name;
  int64_t imageId = -1;
  int64_t width = 0, height = 0;
  std::vector<PredictedBox> boxes;
};

// What a model takes: image files, or rows of a table.
STUDIO_CHOICE(PredictInput, image, table)

struct PredictionReport {
  Choice<TaskKind> task = TaskKind::classification;  // the run's task.kind
  std::string model;                                 // what predicted: "cnn w32 d2, best checkpoint of runs/x"
  std::string weights;                               // best | last | ema
  std::string note;                                  // why the weights are not the ones asked for
  std::string device;
  Choice<PredictInput> input = PredictInput::image;
  std::vector<std::string> classes;
  std::vector<PredictionRow> rows;
  std::vector<float> probabilities;  // rows x classes, every class (0 for a skipped row)
  std::vector<float> features;       // tables: rows x features, as read (for attributions)
  // PredictOptions::penultimate: rows x penultimateSize (images).
  std::vector<float> penultimate;
  int64_t penultimateSize = 0;
  // A regression or multi-label model (classes empty): its target columns
  // or labels, and each row's predicted values in the data's units, or each
  // label's probability (rows x targets; NaN for a skipped row).
  std::vector<std::string> targets;
  std::vector<float> values;
  // Multi-label: each label is predicted at its threshold (task.threshold,
  // or the run's tuned thresholds.json); empty for a regression.
  // tagSeparator joins a row's predicted labels.
  std::vector<double> thresholds;
  std::string tagSeparator = "|";
  int64_t skipped = 0;
  int64_t labelled = 0, correct = 0;            // rows with a known label; of them, top-1 right
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted], when labelled > 0
  double seconds = 0;                           // loading the inputs and predicting
  // A detector's (task.kind detection): the annotations' id of each class
  // (COCO's category_id), the boxes found, and with annotations COCO's
  // twelve figures (CocoStats::stats' order), each class's AP@[.50:.95]
  // (NaN: no box of it in the annotations) and the annotations' box count.
  std::vector<int64_t> categoryIds;
  int64_t boxesFound = 0;
  bool evaluated = false;
  std::array<double, 12> coco{};
  std::vector<double> apPerClass;
  // task.kind instance_segmentation: the masks' COCOeval.stats ("segm") and AP per class.
  bool maskEvaluated = false;
  std::array<double, 12> maskCoco{};
  std::vector<double> maskApPerClass;
  int64_t truthBoxes = 0;
  // A segmenter's: the masks written, and with annotations (a folder of
  // masks) the figures of the pixels' confusion matrix (in confusion; each
  // image at its own size), over the images that have a mask (labelled).
  int64_t masksWritten = 0;
  SegmentationFigures segmentation;
  std::vector<Mask> masks;  // PredictOptions::keepMasks: each row's (empty for a skipped row)
  double accuracy() const { return labelled > 0 ? static_cast<double>(correct) / static_cast<double>(labelled) : 0; }
};

// Grad-CAM of one image for one class.
// classIndex is the output explained: a classifier's class (the predicted one
// unless asked), a multi-label model's label (the most probable unless asked),
// a regression's target (the first unless asked); output names it, and
// probability is the class's or label's probability, or the target's
// predicted value in the data's units.
struct GradCamMap {
  std::string layer;       // the stage whose activations it weighs ("4", "layer4")
  int64_t classIndex = 0;  // the output it explains
  std::string output;      // its class, label or target
  float probability = 0;   // the model's probability of that class (a regression: the value)
  int64_t height = 0, width = 0;
  std::vector<float> heat;     // height x width, row-major, in [0, 1]
  std::vector<uint8_t> image;  // the model's input as pixels (height x width x channels, before normalising)
  int64_t channels = 0;
};

// A table row's features weighed for one class: gradient x input (Shrikumar
// et al. 2016; Captum's InputXGradient), the class's logit's gradient with
// respect to each normalised feature times that feature.
struct FeatureAttribution {
  int64_t classIndex = 0;  // the output explained, as GradCamMap's
  std::string output;      // its class, label or target
  float probability = 0;
  std::vector<std::string> features;  // the model's feature columns, in order
  std::vector<float> values;          // one per feature
};

// Progress: (done, total); return false to stop (the report holds what was done).
using PredictProgress = std::function<bool(int64_t done, int64_t total)>;

class Predictor {
 public:
  // A run folder or an export folder. Throws InputError naming the folder or
  // file: not found, no checkpoint, an export of another format version.
  Predictor(const std::string& runOrExport, const PredictOptions& options = {});
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  const std::vector<std::string>& classes() const;
  PredictInput input() const;
  std::string description() const;
  TaskKind task() const;  // the run's task.kind

  // Throws InputError naming the file, row or column (unless skipBad, where
  // the row says why), IoError when the input cannot be read.
  PredictionReport predict(const std::string& input, const PredictProgress& progress = {});
  // A detector's, with annotations (a COCO instances JSON, a YOLO data.yaml
  // or a VOC folder, as data.annotations reads them): the annotated images
  // under the input folder, each row with its COCO image id, and COCO's
  // figures (studio/box_predict.h). annotations "": as predict(input).
  // Throws InputError for another task's run when annotations are given.
  PredictionReport predict(const std::string& input, const std::string& annotations,
                           const PredictProgress& progress = {});
  PredictionReport predictFiles(const std::vector<std::string>& files, const PredictProgress& progress = {});

  // classIndex -1: the predicted class. Throws InputError for a table model,
  // a detector, or one without a convolutional stage.
  GradCamMap gradCam(const std::string& imageFile, int64_t classIndex = -1);
  // rawFeatures: one row as read (PredictionReport::features); classIndex -1:
  // the predicted class. Throws InputError for an image model (a detector
  // too) or a row of another width.
  FeatureAttribution attributions(const std::vector<float>& rawFeatures, int64_t classIndex = -1);

  // The run's task's hooks (engine/src/predict/predictor_impl.h).
  struct Impl;

 private:
  std::unique_ptr<Impl> m;
};

// The TorchScript file a run or export folder's model would load (its code
// runs: the window asks before trusting it), or "" when its model is a
// built-in one or the folder cannot be read (the Predictor then says why).
std::string torchScriptFileOf(const std::string& runOrExport);

// Writes a report as CSV: source, label (when known), then top-k class and
// probability pairs, then error. Throws IoError naming the file.
void writePredictionsCsv(const PredictionReport& report, const std::string& path);

}  // namespace studio
