#pragma once
// A semantic segmentation's images and their masks on disk (issue 61,
// item 1), read from the file system only (nothing is decoded):
//  - a folder of images and a folder of PNG masks with the same relative
//    paths and stems: images/street/a.jpg with masks/street/a.png;
//  - Pascal VOC's layout under one root: JPEGImages/<stem>.jpg,
//    SegmentationClass/<stem>.png, and the splits' lists
//    ImageSets/Segmentation/train.txt and val.txt (a stem a line).
// Torch-free. Thread: free functions, any thread.

#include <string>
#include <vector>

namespace studio {

struct MaskedFile {
  std::string image, mask;  // full paths
};

struct SegmentationFiles {
  std::vector<MaskedFile> files;          // sorted by the image's path
  std::vector<std::string> withoutMask;   // images whose mask is missing (full paths)
  std::vector<std::string> withoutImage;  // masks whose image is missing
};

// Every image under `images` paired with the .png of its relative path and
// stem under `masks`. Throws DataError naming a folder that cannot be read,
// two images of one stem in one folder (a.jpg and a.png: one mask for
// both), or no pair at all.
SegmentationFiles pairImagesAndMasks(const std::string& images, const std::string& masks);

// Pascal VOC's segmentation layout under root (JPEGImages,
// SegmentationClass and ImageSets/Segmentation).
bool isVocSegmentation(const std::string& root);
struct VocSegmentation {
  std::vector<MaskedFile> train, val;
};
// Throws DataError naming the list and its line whose image or mask is
// missing, or a list that is missing or empty.
VocSegmentation readVocSegmentation(const std::string& root);

// VOC's 21 classes, as torchvision's segmentation weights name them
// (torchvision.models._meta._VOC_CATEGORIES): "__background__", "aeroplane", ...
const std::vector<std::string>& vocClassNames();

}  // namespace studio
