// Object detection's settings (task.kind detection, issue 43): where the
// boxes are (data.annotations and its test set), what a bad box does, the
// box-aware augmentations, and the detector's sizes and post-processing
// (model.detector.*, torchvision's builder keywords). The readers are
// studio/box_annotations.h; the detectors engine/src/detection/.
#include "schema_builder.h"
#include "studio/model_kinds.h"

namespace studio::schema {

void addDetectionSettings(Fields& add) {
  const std::string data = "Data", model = "Model";
  // Bound to the weights as the model's and the data's settings are, but the
  // box augmentations and the post-processing and sampling (which touch no
  // weight) fork.
  add.forks = false;
  const Rule detection{[](const TrainConfig& c) { return boxesTask(c.task.kind); },
                       "task.kind detection or instance_segmentation"};
  when(add(SETTING(data.annotations), data, "Annotations (boxes or masks)", T::DataPath,
           "Detection: the boxes of the images under Data, as a COCO instances JSON (CVAT, Label Studio and "
           "Roboflow export it), a YOLO data.yaml (one .txt of \"class cx cy w h\" per image in labels/ beside "
           "images/; its train:, val: and test: are the splits), or a folder of Pascal VOC XML files. Images without "
           "boxes are kept as negatives; crowd boxes are ignored as COCO does. Instance segmentation: a COCO "
           "instances JSON whose annotations each have a \"segmentation\" (polygons or RLE), or a YOLO data.yaml "
           "of polygon labels. Segmentation: a folder of PNG masks "
           "with the images' relative paths and stems (a class index per pixel, as a palette or gray PNG), a COCO "
           "instances JSON of polygons or RLE, a YOLO data.yaml (one .txt of \"class x1 y1 x2 y2 ...\" polygons "
           "per image in labels/), or empty when Data is Pascal VOC's folder (JPEGImages, SegmentationClass, "
           "ImageSets)."),
       Rule{[](const TrainConfig& c) { return annotatedTask(c.task.kind); },
            "task.kind detection, segmentation or instance_segmentation"},
       true)
      // The picker: a file (COCO's JSON, YOLO's data.yaml) for boxes, a folder of masks for a
      // segmentation unless a file is named already; the window offers the other too.
      .picksFile = [](const TrainConfig& c) {
    const std::string& a = c.data.annotations;
    auto ends = [&](const std::string& e) {
      return a.size() >= e.size() && a.compare(a.size() - e.size(), e.size(), e) == 0;
    };
    return c.task.kind != TaskKind::segmentation || ends(".json") || ends(".yaml") || ends(".yml");
  };
  when(add(SETTING(data.annotation_format), data, "Boxes format", T::Choice,
           "auto: a .json file is COCO, a .yaml YOLO, a folder of .xml files VOC; or name it."),
       detection, true);
  when(add(SETTING(data.on_bad_box), data, "Boxes past the image", T::Choice,
           "A box that extends past its image by more than a pixel: fail (stop, naming its file and entry), clip "
           "it to the image, or skip it (counted in the log)."),
       detection, true);
  // Issue 59, item 3: images without boxes are kept as negatives, without a word however many they were.
  when(range(forks(add(SETTING(data.warn_images_without_boxes), data, "Warn past this share without boxes", T::Real,
                       "Images without a box are kept as negatives (they teach what is not an object); a split "
                       "where more than this share of the images have none is said in the log, with its counts. "
                       "1: never.")),
             between(0, 1)),
       detection, true);
  when(add(SETTING(data.test_annotations), data, "Test boxes", T::File,
           "A separate test set's annotations (any of the three formats), its images under Test images; "
           "without it, the test fraction of the images is held out."),
       detection, true);
  when(add(SETTING(data.test_root), data, "Test images", T::Folder,
           "Where the test annotations' images are; empty: the folder in Data."),
       Rule{[](const TrainConfig& c) { return boxesTask(c.task.kind) && !c.data.test_annotations.empty(); },
            "task.kind detection or instance_segmentation with data.test_annotations"},
       true);
  when(forks(
           add(SETTING(data.augment_photometric), data, "Photometric distortion", T::Bool,
               "RandomPhotometricDistort: brightness, contrast, saturation and hue changed at random, and the channels "
               "shuffled (each with p 0.5), as torchvision's SSD recipe (detection); a segmentation's after its crop, "
               "the mask left as it is.")),
       Rule{[](const TrainConfig& c) { return annotatedTask(c.task.kind); },
            "task.kind detection, segmentation or instance_segmentation"});
  when(forks(add(SETTING(data.augment_zoom_out), data, "Random zoom out", T::Bool,
                 "RandomZoomOut: the image placed on a canvas 1 to 4 times its sides (p 0.5), so objects appear "
                 "smaller; the boxes follow (detection).")),
       detection);
  when(forks(add(SETTING(data.augment_iou_crop), data, "Random IoU crop", T::Bool,
                 "RandomIoUCrop: a crop that overlaps some box by at least a drawn IoU (SSD's sampler); boxes whose "
                 "centres leave it are dropped with their labels (detection).")),
       detection);

  const Rule detector{[](const TrainConfig& c) { return isModel(c.model.kind, ModelFamily::detector); },
                      "a detector model.kind (" + detectorKindsText() + ")"};
  const Rule resizes{[](const TrainConfig& c) {
                       const DetectorFamily* f = findDetectorFamily(c.model.kind);
                       return f && !f->fixedSize();
                     },
                     "a detector that resizes by min_size and max_size (not ssdlite320_mobilenet_v3_large, which "
                     "resizes every image to 320 x 320)"};
  when(range(add(SETTING(model.detector.min_size), model, "Detector: shorter side (px)", T::Int,
                 "Each image is resized so that its shorter side is this (torchvision's min_size), unless its "
                 "longer side would pass the longest side; 0: the model's (320 for the _320_ model, else 800)."),
             between(0, 4096)),
       resizes, true);
  when(range(add(SETTING(model.detector.max_size), model, "Detector: longest side (px)", T::Int,
                 "The longest side an image is resized to (torchvision's max_size); 0: the model's (640 for the "
                 "_320_ model, else 1333)."),
             between(0, 8192)),
       resizes, true);
  when(range(forks(add(SETTING(model.detector.score_threshold), model, "Detector: score threshold", T::Real,
                       "Boxes scored below this are dropped before NMS (torchvision's box_score_thresh, RetinaNet's "
                       "score_thresh, 0.05; SSDlite's score_thresh is 0.001 in torchvision); "
                       "evaluation keeps low scores, as COCO's mAP wants them.")),
             between(0, 1, false, true)),
       detector, true);
  when(range(
           forks(add(SETTING(model.detector.nms_iou), model, "Detector: NMS IoU", T::Real,
                     "Of two boxes of a class that overlap by more than this IoU, the lower-scored is dropped "
                     "(torchvision's box_nms_thresh, RetinaNet's nms_thresh, 0.5; SSDlite's is 0.55 in torchvision).")),
           between(0, 1, true, false)),
       detector, true);
  when(range(
           forks(add(
               SETTING(model.detector.detections_per_image), model, "Detector: boxes per image", T::Int,
               "The most boxes an image keeps, best scores first (torchvision's box_detections_per_img, 100; "
               "RetinaNet's and SSDlite's detections_per_img are 300 in torchvision, 100 here too: COCO's mAP reads at "
               "most 100).")),
           between(1, 1000)),
       detector, true);
  when(range(
           forks(add(SETTING(model.detector.rois_per_image), model, "Detector: proposals trained per image", T::Int,
                     "How many of the RPN's proposals per image train the box heads, a quarter of them objects at most "
                     "(torchvision's box_batch_size_per_image, 512). The heads' work grows with it: 128 or 64 trains "
                     "several times faster on the CPU, for a little accuracy.")),
           between(1, 4096)),
       Rule{[](const TrainConfig& c) {
              const DetectorFamily* f = findDetectorFamily(c.model.kind);
              return f && f->twoStage();
            },
            "a two-stage detector model.kind (fasterrcnn_*; RetinaNet and SSDlite have no proposals)"},
       true);
  // Issue 60, item 6: model.weights switched it without a word, and weights that were not trained
  // (a random state dict) then barely learnt.
  when(add(SETTING(model.detector.batchnorm), model, "Detector: backbone BatchNorm", T::Choice,
           "The MobileNetV3 backbone's BatchNorm layers: frozen (torchvision's FrozenBatchNorm2d: the statistics "
           "and scales of the weights, unchanged), trainable (BatchNorm2d, which learns from the batches), or auto: "
           "frozen when model.weights are given, trainable without them, as torchvision's builder does. Frozen "
           "suits trained weights and small batches; weights that were not trained need trainable."),
       Rule{[](const TrainConfig& c) {
              const DetectorFamily* f = findDetectorFamily(c.model.kind);
              return f && f->normFollowsWeights();
            },
            "a Faster R-CNN MobileNetV3 model.kind (fasterrcnn_mobilenet_v3_large_fpn and _320_fpn; the ResNet-50 "
            "detectors and SSDlite keep BatchNorm2d)"},
       true);
}

}  // namespace studio::schema
