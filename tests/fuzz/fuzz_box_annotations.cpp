// Detection's annotation readers (studio/box_annotations.h): COCO JSON, a
// Pascal VOC XML file in its folder, a YOLO data.yaml (its images folder
// empty; its train:, val: and test: read too), chosen by the first byte;
// each with every BadBoxes policy. A reader answers bad bytes with a
// DataError naming them, never a crash, a hang or another exception; what
// it returns is consistent. The same bytes as one annotation's
// segmentation (studio/coco_segmentation.h: the JSON) or a YOLO label file
// of polygons (studio/yolo_masks.h: the text), painted as a mask; and the
// COCO and YOLO files read with a mask per box (instance segmentation).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_input.h"
#include "studio/box_annotations.h"
#include "studio/coco_segmentation.h"
#include "studio/errors.h"
#include "studio/yolo_masks.h"
#include "studio/yolo_splits.h"

#include <nlohmann/json.hpp>

using namespace studio;
namespace fs = std::filesystem;

namespace {

const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("fuzz_box_annotations-" + std::to_string(::getpid()));
    fs::create_directories(d / "voc");
    fs::create_directories(d / "yolo" / "images");
    return d;
  }();
  return dir;
}

void write(const fs::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void check(const BoxAnnotations& a) {
  for (const auto& b : a.boxes) {
    if (b.image < 0 || b.image >= static_cast<int64_t>(a.images.size())) std::abort();
    if (b.label < 0 || b.label >= static_cast<int64_t>(a.categories.size())) std::abort();
    if (!(b.w > 0) || !(b.h > 0)) std::abort();
  }
  // Read with masks (instance segmentation): one per box, at its image's size.
  if (!a.masks.empty() && a.masks.size() != a.boxes.size()) std::abort();
  for (size_t i = 0; i < a.masks.size(); ++i) {
    const AnnotatedImage& im = a.images[static_cast<size_t>(a.boxes[i].image)];
    if (a.masks[i].height != im.height || a.masks[i].width != im.width) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0] % 3;
  ++data, --size;
  std::string path, format;
  if (kind == 0) {
    path = (scratch() / "coco.json").string();
    write(path, data, size);
    format = "coco";
  } else if (kind == 1) {
    path = (scratch() / "voc").string();
    write(scratch() / "voc" / "a.xml", data, size);
    format = "voc";
  } else {
    path = (scratch() / "yolo" / "data.yaml").string();
    write(path, data, size);
    format = "yolo";
  }
  try {
    if (kind == 0) {
      const auto json = nlohmann::json::parse(data, data + size, nullptr, false);
      if (!json.is_discarded()) {
        const Rle r = cocoSegmentation(json, 6, 7, "fuzz.json annotation 1");
        if (rleDecode(r).size() != 42 || semanticMaskOf({{r, 3}}, 6, 7).values.size() != 42) std::abort();
      }
    } else if (kind == 2) {
      const auto polygons =
          readYoloPolygons(std::string(reinterpret_cast<const char*>(data), size), "fuzz.txt", 6, 7, 3);
      if (yoloSemanticMask(polygons, 6, 7).values.size() != 42) std::abort();
    }
  } catch (const DataError&) {
  }
  for (const BadBoxes bad : {BadBoxes::fail, BadBoxes::clip, BadBoxes::skip}) {
    try {
      const BoxAnnotations a = readBoxAnnotations(path, scratch().string(), format, bad);
      check(a);
      // A data.yaml's train:, val: and test: (studio/yolo_splits.h): one split per image, or none given.
      if (format == "yolo") {
        const YoloSplits s = yoloSplitsOf(path, scratch().string(), a);
        if (s.declared() && s.of.size() != a.images.size()) std::abort();
      }
    } catch (const DataError&) {
    }
  }
  try {  // instance segmentation's masks beside the boxes (VOC refuses, naming the task)
    const BoxAnnotations a = readBoxAnnotations(path, scratch().string(), format, BadBoxes::fail, /*masks=*/true);
    if (a.masks.size() != a.boxes.size()) std::abort();
    check(a);
  } catch (const DataError&) {
  }
  return 0;
}
