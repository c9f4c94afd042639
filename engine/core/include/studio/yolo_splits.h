#pragma once
// A YOLO data.yaml's own splits (issue 59 item 5, issue 60 item 9): its
// train:, val: and test: entries, each a folder of images, a .txt list of
// image paths (one a line, relative to the list's folder), or a list of
// those; relative to its path: (itself relative to the data.yaml's folder),
// or to the data.yaml's folder without one. Ultralytics' rule for Roboflow's
// exports is kept: an entry "../x" that does not exist is read as "x".
// Every entry must lie under data.root (the images the studio reads).
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/box_annotations.h"

namespace studio {

enum class YoloSplit { none, train, val, test };

struct YoloSplits {
  // Each image of the annotations, in their order: the split its data.yaml
  // gives it (none: in no entry, not used). Empty when the data.yaml gives
  // no split: every image is then pooled and the splits drawn, as before.
  std::vector<YoloSplit> of;
  // The entries as written ("images/val"), "" when not given; a val: or
  // test: that is the train: entry itself (coco128 validates on its training
  // images) is read as not given, and said in `note`.
  std::string train, val, test;
  std::string note;
  bool declared() const { return !of.empty(); }
};

// The splits of `a`, read from `dataYaml` under `root`. Throws DataError
// naming the entry: one that is missing, outside root, not a folder or a
// regular file, without images, or an image in two splits.
YoloSplits yoloSplitsOf(const std::string& dataYaml, const std::string& root, const BoxAnnotations& a);

}  // namespace studio
