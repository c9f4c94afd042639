#pragma once
// Boxes of objects in images, read from the three formats people label in
// (issue 43, task.kind detection):
//  - COCO instances JSON (CVAT, Label Studio and Roboflow export it):
//    "images" (id, file_name, width, height), "annotations" (id, image_id,
//    category_id, bbox [x, y, w, h], area, iscrowd), "categories" (id, name);
//  - a YOLO dataset: data.yaml ("names": a list, or a map of index: name)
//    and, per image, a .txt of lines "class cx cy w h" normalised to the
//    image's size, in labels/ beside images/ (or beside the image); the
//    image's size is read from its header;
//  - Pascal VOC: a folder of XML files, each <annotation> with <filename>,
//    <size> (<width>, <height>) and <object>s (<name>, <difficult>,
//    <bndbox> xmin ymin xmax ymax, 1-based pixels as VOC writes them).
// Every format ends as the same boxes: pixel [x, y, w, h] in the image, a
// contiguous label per category (categories sorted by the file's id or
// index; VOC's names sorted) with the file's own ids and names kept for
// predictions and exports. YOLO's images are every image under root (its
// labels/ mirror images/); COCO's and VOC's are the files they name.
// Images without boxes are kept (negatives). Crowd boxes (COCO iscrowd, VOC
// difficult) are kept, marked: training and evaluation ignore them as COCO
// does.
// Bad input is refused with its file and entry (BadBoxes::fail) — a box past
// its image by more than a pixel (or clipped, or skipped and counted), a box
// of zero or negative width or height, an unknown category, an annotation of
// a missing image, a YOLO line that does not parse.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/coco_mask.h"

namespace studio {

enum class BadBoxes { fail, clip, skip };

// The most boxes a detector's training takes in one image; the readers
// refuse an image with more, naming it, before holding them all.
constexpr int64_t kMaxBoxesPerImage = 100000;

struct AnnotatedImage {
  std::string file;  // the image's path (data.root joined with the file's name)
  int64_t id = 0;    // COCO's image id; else the image's position
  int64_t width = 0, height = 0;
};

struct AnnotatedBox {
  int64_t image = 0;                  // index into BoxAnnotations::images
  int64_t label = 0;                  // contiguous, into BoxAnnotations::categories
  double x = 0, y = 0, w = 0, h = 0;  // pixels
  double area = 0;                    // COCO's "area" when given, else w * h
  bool crowd = false;
};

struct BoxCategory {
  int64_t id = 0;  // the file's: COCO's category id, YOLO's class index; VOC: its place by name
  std::string name;
};

struct BoxAnnotations {
  std::string format;  // coco | yolo | voc
  std::vector<AnnotatedImage> images;
  std::vector<AnnotatedBox> boxes;
  std::vector<BoxCategory> categories;
  int64_t clipped = 0, skipped = 0;  // BadBoxes::clip / skip: how many
  // Read with masks (task.kind instance_segmentation): boxes[i]'s instance
  // mask at its image's size (COCO's polygons or RLE); else empty.
  std::vector<Rle> masks;
};

// format: coco | yolo | voc, or auto (a .json file is COCO, a .yaml YOLO, a
// folder of .xml VOC). root: where the images are (COCO's file_name, VOC's
// filename are relative to it). masks: each box's mask too (COCO's
// "segmentation", or YOLO's polygon labels, studio/yolo_masks.h; an
// annotation without one, or VOC, is refused). Throws DataError naming the
// file and entry.
BoxAnnotations readBoxAnnotations(const std::string& annotations, const std::string& root, const std::string& format,
                                  BadBoxes bad, bool masks = false);

// A YOLO data.yaml's parts, for the readers of its boxes and of its
// polygons (studio/yolo_masks.h): its classes ("names") and every image
// under root, sorted by path, with its size (no boxes); an image's label
// file (labels/ in place of the last images/ of its path, else beside it,
// with a .txt suffix); that file's text (labels: yoloLabelFile(image)), ""
// where there is none (an image without objects). Throw DataError naming the file: a data.yaml without
// names, an image that cannot be read or lies outside root, a label file
// that is no text file.
BoxAnnotations readYoloImages(const std::string& dataYaml, const std::string& root);
std::string yoloLabelFile(const std::string& image);
std::string readYoloLabelText(const std::string& labels, const std::string& image);

}  // namespace studio
