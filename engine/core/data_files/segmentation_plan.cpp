#include "segmentation_plan.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "plan_splits.h"
#include "studio/box_annotations.h"
#include "studio/coco_segmentation.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/mask_file.h"
#include "studio/plan_masks.h"
#include "studio/segmentation_files.h"
#include "studio/yolo_masks.h"
#include "studio/yolo_splits.h"

namespace studio {
namespace {

namespace fs = std::filesystem;

// A name a line, blank lines and surrounding spaces left out.
std::vector<std::string> namesInFile(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw DataError(file + " cannot be read");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

std::vector<std::string> maskClassNames(const DataConfig& d, bool voc) {
  if (!d.class_names.empty()) return d.class_names;
  if (voc) return vocClassNames();
  const std::string listed = (fs::path(d.annotations) / "classes.txt").string();
  std::error_code ec;
  if (fs::is_regular_file(listed, ec)) {
    std::vector<std::string> names = namesInFile(listed);
    if (names.empty()) throw DataError(listed + " names no class: a class name a line, mask value 0 first");
    return names;
  }
  throw DataError("the masks in " + d.annotations +
                  " need their classes' names: set data.class_names (\"background, road, car\": mask value 0 first) "
                  "or put a classes.txt (a name a line) beside the masks");
}

void checkClassNames(const std::vector<std::string>& names, const DataConfig& d, const std::string& from) {
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second) throw DataError(from + " names the class \"" + n + "\" twice");
  if (names.size() < 2)
    throw DataError(from + " names " + std::to_string(names.size()) +
                    " class: a segmentation needs at least two (the background among them)");
  if (static_cast<int64_t>(names.size()) > d.ignore_index)
    throw DataError(from + " names " + std::to_string(names.size()) + " classes, so mask value " +
                    std::to_string(d.ignore_index) + " would be the class \"" +
                    names[static_cast<size_t>(d.ignore_index)] + "\" and data.ignore_index " +
                    std::to_string(d.ignore_index) + " too: set data.ignore_index above the classes' values");
}

void addMasked(DataPlan& p, PlannedSplit& split, const MaskedFile& f) {
  plan_split::append(split, static_cast<int64_t>(p.files.size()), 0);
  p.files.push_back(f.image);
  p.maskFiles.push_back(f.mask);
}

// "3 images under x have no mask (a.jpg, ...)": said, not fatal.
void sayUnpaired(const std::vector<std::string>& paths, const std::string& what) {
  if (paths.empty()) return;
  log::warn(std::to_string(paths.size()) + " " + what + " and are not used (" + paths.front() +
            (paths.size() > 1 ? ", ..." : "") + ")");
}

// The classes of instances painted into masks: the background, then the
// annotations' (what: "categories", "classes"), or data.class_names when it
// names as many; at most 254 and the background.
void instanceClasses(DataPlan& p, const DataConfig& d, const std::vector<BoxCategory>& categories, const char* what,
                     const char* order) {
  if (d.class_names.empty()) {
    p.classNames = {"background"};
    for (const auto& c : categories) p.classNames.push_back(c.name);
  } else if (d.class_names.size() != categories.size() + 1) {
    throw DataError("data.class_names names " + std::to_string(d.class_names.size()) + " classes, but " +
                    d.annotations + " has " + std::to_string(categories.size()) + " " + what +
                    ": name the background, then " + order);
  }
  if (categories.size() > 254)
    throw DataError(d.annotations + " has " + std::to_string(categories.size()) + " " + what +
                    ": a mask holds 254 classes and the background");
}

// A COCO instances JSON's images under data.root and the masks of their
// annotations' segmentations (polygons or RLE, crowds among them, as the
// references' ConvertCocoPolysToMask takes them); the classes: the
// background, then the categories by id.
void planCocoMasks(DataPlan& p, const DataConfig& d) {
  // The images, their sizes and the categories, checked as detection's reader checks them.
  const BoxAnnotations coco = readBoxAnnotations(d.annotations, d.root, "coco", BadBoxes::clip);
  instanceClasses(p, d, coco.categories, "categories", "each category by id");
  std::map<int64_t, size_t> imageAt;
  std::map<int64_t, uint8_t> classOf;
  for (size_t i = 0; i < coco.images.size(); ++i) {
    imageAt[coco.images[i].id] = i;
    p.instanceMasks.push_back({coco.images[i].height, coco.images[i].width, coco.images[i].id, {}});
  }
  for (size_t k = 0; k < coco.categories.size(); ++k) classOf[coco.categories[k].id] = static_cast<uint8_t>(k + 1);
  const nlohmann::json j = nlohmann::json::parse(readFileBytes(d.annotations, "COCO annotations"), nullptr, false);
  if (j.is_discarded()) throw DataError(d.annotations + " is not valid JSON");
  const auto& annotations = j.at("annotations");
  for (size_t a = 0; a < annotations.size(); ++a) {
    const nlohmann::json& ann = annotations[a];
    const std::string where = d.annotations + " annotations[" + std::to_string(a) + "]" +
                              (ann.contains("id") ? " (id " + ann["id"].dump() + ")" : "");
    if (!ann.contains("segmentation"))
      throw DataError(where +
                      " has no \"segmentation\": task.kind segmentation trains on masks (polygons or RLE); "
                      "a file of boxes alone trains task.kind detection");
    const auto image = imageAt.find(ann.value("image_id", int64_t{-1}));
    const auto cls = classOf.find(ann.value("category_id", int64_t{-1}));
    if (image == imageAt.end() || cls == classOf.end())
      throw DataError(where + ": its image_id or category_id is not one of the file's");
    DataPlan::InstanceMasks& m = p.instanceMasks[image->second];
    m.instances.emplace_back(cocoSegmentation(ann["segmentation"], m.height, m.width, where), cls->second);
  }
  for (size_t i = 0; i < coco.images.size(); ++i) {
    plan_split::append(p.train, static_cast<int64_t>(p.files.size()), 0);
    p.files.push_back(coco.images[i].file);
  }
  p.masksFrom = d.annotations;
}

// A YOLO segmentation data.yaml (Ultralytics' layout): the images under
// data.root, each one's polygons from its labels/*.txt ("class x1 y1 x2 y2
// ...", fractions of the image), each polygon an instance painted as COCO's
// are; the classes: the background, then data.yaml's names. The data.yaml's
// own train:, val: and test: entries are the splits where it gives them
// (into `given`, by YoloSplit), as a detection's are.
YoloSplits planYoloMasks(DataPlan& p, const DataConfig& d, std::array<PlannedSplit, 4>& given) {
  const BoxAnnotations yolo = readYoloImages(d.annotations, d.root);
  instanceClasses(p, d, yolo.categories, "classes", "each of its classes in order");
  const YoloSplits ys = yoloSplitsOf(d.annotations, d.root, yolo);
  const auto classes = static_cast<int64_t>(yolo.categories.size());
  for (size_t i = 0; i < yolo.images.size(); ++i) {
    const AnnotatedImage& im = yolo.images[i];
    DataPlan::InstanceMasks m{im.height, im.width, im.id, {}};
    const std::string labels = yoloLabelFile(im.file);
    for (const YoloPolygon& polygon :
         readYoloPolygons(readYoloLabelText(labels, im.file), labels, im.height, im.width, classes))
      m.instances.emplace_back(rleFromPolygon(polygon.xy, im.height, im.width),
                               static_cast<uint8_t>(polygon.label + 1));
    p.instanceMasks.push_back(std::move(m));
    plan_split::append(given[static_cast<size_t>(ys.declared() ? ys.of[i] : YoloSplit::train)],
                       static_cast<int64_t>(p.files.size()), 0);
    p.files.push_back(im.file);
  }
  p.masksFrom = d.annotations;
  if (!given[0].items.empty())
    log::info(std::to_string(given[0].size()) + " images under data.root " + d.root + " are in none of " +
              d.annotations + "'s splits and are not used");
  return ys;
}

}  // namespace

void planSegmentation(DataPlan& p, const DataConfig& d, uint64_t seed) {
  const bool voc = d.annotations.empty() && isVocSegmentation(d.root);
  if (d.annotations.empty() && !voc)
    throw DataError(
        "task.kind segmentation needs masks: set data.annotations to the folder of PNG masks beside data.root's "
        "images, or data.root to Pascal VOC's folder (JPEGImages, SegmentationClass, ImageSets/Segmentation); " +
        d.root + " is not VOC's");
  std::error_code ec;
  const std::string ext = fs::path(d.annotations).extension().string();
  const bool coco = !voc && ext == ".json", yolo = !voc && (ext == ".yaml" || ext == ".yml");
  if (!voc && !coco && !yolo && !fs::is_directory(d.annotations, ec))
    throw DataError("data.annotations " + d.annotations +
                    ": task.kind segmentation reads a folder of PNG masks (a class index per pixel) with the images' "
                    "relative paths and stems, a COCO instances JSON with segmentations, or a YOLO data.yaml with "
                    "polygon labels; this is none of them");
  if (yolo && !fs::is_regular_file(d.annotations, ec))
    throw DataError("data.annotations " + d.annotations + " does not exist");
  std::array<PlannedSplit, 4> given;  // a YOLO data.yaml's, by YoloSplit
  YoloSplits ys;
  if (coco) planCocoMasks(p, d);
  if (yolo) ys = planYoloMasks(p, d, given);
  if (!(coco || yolo) || !d.class_names.empty()) p.classNames = maskClassNames(d, voc);
  checkClassNames(p.classNames, d,
                  d.class_names.empty() ? (voc            ? "VOC"
                                           : coco || yolo ? d.annotations
                                                          : d.annotations + "/classes.txt")
                                        : std::string("data.class_names"));
  if (voc) {
    const VocSegmentation v = readVocSegmentation(d.root);
    for (const auto& f : v.train) addMasked(p, p.train, f);
    for (const auto& f : v.val) addMasked(p, p.test, f);
    p.trainFrom = d.root + "/ImageSets/Segmentation/train.txt";
    p.testFrom = d.root + "/ImageSets/Segmentation/val.txt (data.test_fraction is not used)";
  } else {
    if (!coco && !yolo) {
      const SegmentationFiles pairs = pairImagesAndMasks(d.root, d.annotations);
      sayUnpaired(pairs.withoutMask, "images under " + d.root + " have no mask in " + d.annotations);
      sayUnpaired(pairs.withoutImage, "masks in " + d.annotations + " have no image under " + d.root);
      for (const auto& f : pairs.files) addMasked(p, p.train, f);
    }
    if (yolo) p.train = std::move(given[1]);
    p.trainFrom =
        ys.declared() ? d.annotations + "'s train: " + ys.train : d.root + " with the masks in " + d.annotations;
    if (!ys.test.empty()) {
      p.test = std::move(given[3]);
      p.testFrom = d.annotations + "'s test: " + ys.test + " (data.test_fraction is not used)";
    } else {
      if (d.test_fraction <= 0)
        throw DataError(d.annotations +
                        ": data.test_fraction is 0, so nothing is left to test on: set data.test_fraction (e.g. 0.2)");
      p.test = plan_split::holdOut(p.train, d.test_fraction, mixSeed(seed, plan_split::kTestStream), 1);
      p.testFrom = "held out of " + d.root + ": " + plan_split::percent(d.test_fraction) + " of the images" +
                   (ys.note.empty() ? "" : " (" + ys.note + ")");
    }
  }
  plan_split::limit(p.train, d.train_limit, true, mixSeed(seed, plan_split::kLimitStream));
  plan_split::limit(p.test, d.test_limit, true, mixSeed(seed, plan_split::kLimitStream + 1));
  if (!ys.val.empty()) {
    p.val = std::move(given[2]);
    p.valFrom = d.annotations + "'s val: " + ys.val + " (data.val_fraction is not used)";
    return;
  }
  p.val = plan_split::holdOut(p.train, d.val_fraction, mixSeed(seed, plan_split::kValStream), 1);
  if (d.val_fraction > 0)
    p.valFrom = "held out of the training images: " + plan_split::percent(d.val_fraction) + " of them";
}

Mask itemMask(const DataPlan& p, int64_t item) {
  const auto i = static_cast<size_t>(item);
  if (!p.instanceMasks.empty()) {
    const DataPlan::InstanceMasks& m = p.instanceMasks.at(i);
    return semanticMaskOf(m.instances, m.height, m.width);
  }
  return decodeMaskFile(p.maskFiles.at(i));
}

std::string itemMaskSource(const DataPlan& p, int64_t item) {
  const auto i = static_cast<size_t>(item);
  if (!p.instanceMasks.empty())
    return p.masksFrom + "'s image " + std::to_string(p.instanceMasks.at(i).id) + " (" + p.files.at(i) + ")";
  return p.maskFiles.at(i);
}

std::vector<int64_t> maskPixelsPerClass(const DataPlan& p, const std::vector<int64_t>& items) {
  const size_t classes = p.classNames.size();
  std::vector<int64_t> counts(classes, 0);
  for (const int64_t item : items) {
    try {
      for (const uint8_t v : itemMask(p, item).values)
        if (v < classes) ++counts[v];
    } catch (const DataError&) {
      // counted as nothing: the run names the file and what is wrong with it
    }
  }
  return counts;
}

}  // namespace studio
