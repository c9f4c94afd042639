#include "studio/segmentation_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "studio/errors.h"
#include "studio/image_folder.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

// A path relative to `root` without its extension: "street/a".
std::string stemOf(const std::string& path, const std::string& root) {
  fs::path relative = fs::path(path).lexically_relative(root);
  relative.replace_extension();
  return relative.generic_string();
}

// The PNG files under the masks' folder and its sub-folders, sorted, walked
// as an image folder is (imageFilesUnder: hidden ones left out).
std::vector<std::string> pngsUnder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DataError("the masks' folder " + dir + " does not exist or is not a folder");
  int64_t other = 0;
  std::vector<std::string> out = imageFilesUnder(dir, other);
  std::erase_if(out, [](const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext != ".png";
  });
  return out;
}

MaskedFile vocPair(const std::string& root, const std::string& stem) {
  return {root + "/JPEGImages/" + stem + ".jpg", root + "/SegmentationClass/" + stem + ".png"};
}

std::vector<MaskedFile> vocList(const std::string& root, const std::string& split) {
  const std::string list = root + "/ImageSets/Segmentation/" + split + ".txt";
  std::ifstream in(list);
  if (!in) throw DataError("Pascal VOC's list " + list + " is missing or cannot be read");
  std::vector<MaskedFile> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    line.erase(0, line.find_first_not_of(" \t"));
    if (line.empty()) continue;
    MaskedFile f = vocPair(root, line);
    std::error_code ec;
    for (const std::string* p : {&f.image, &f.mask})
      if (!fs::is_regular_file(*p, ec))
        throw DataError("Pascal VOC's list " + list + " line " + std::to_string(number) + " names " + line + ", but " +
                        *p + " is missing");
    out.push_back(std::move(f));
  }
  if (out.empty()) throw DataError("Pascal VOC's list " + list + " names no image");
  return out;
}

}  // namespace

SegmentationFiles pairImagesAndMasks(const std::string& images, const std::string& masks) {
  int64_t other = 0;
  const std::vector<std::string> imageFiles = imageFilesUnder(images, other);
  std::map<std::string, std::string> maskOf;
  for (const std::string& m : pngsUnder(masks)) maskOf[stemOf(m, masks)] = m;
  SegmentationFiles out;
  std::map<std::string, std::string> imageOf;
  for (const std::string& image : imageFiles) {
    const std::string stem = stemOf(image, images);
    if (auto [it, added] = imageOf.emplace(stem, image); !added)
      throw DataError("the images " + it->second + " and " + image + " share the stem " + stem +
                      ": one mask cannot be both images'; rename one");
    auto m = maskOf.find(stem);
    if (m == maskOf.end())
      out.withoutMask.push_back(image);
    else
      out.files.push_back({image, m->second});
  }
  for (const auto& [stem, mask] : maskOf)
    if (!imageOf.count(stem)) out.withoutImage.push_back(mask);
  if (out.files.empty())
    throw DataError("no image under " + images + " has a mask under " + masks +
                    " (a mask is the .png of its image's path and name: images/a/b.jpg, masks/a/b.png)");
  return out;
}

bool isVocSegmentation(const std::string& root) {
  std::error_code ec;
  return fs::is_directory(root + "/JPEGImages", ec) && fs::is_directory(root + "/SegmentationClass", ec) &&
         fs::is_directory(root + "/ImageSets/Segmentation", ec);
}

VocSegmentation readVocSegmentation(const std::string& root) {
  if (!isVocSegmentation(root))
    throw DataError(root +
                    " is not Pascal VOC's layout: it needs JPEGImages, SegmentationClass and "
                    "ImageSets/Segmentation");
  return {vocList(root, "train"), vocList(root, "val")};
}

const std::vector<std::string>& vocClassNames() {
  static const std::vector<std::string> names{
      "__background__", "aeroplane", "bicycle",     "bird", "boat",  "bottle",    "bus",    "car",         "cat",
      "chair",          "cow",       "diningtable", "dog",  "horse", "motorbike", "person", "pottedplant", "sheep",
      "sofa",           "train",     "tvmonitor"};
  return names;
}

}  // namespace studio
