#include "studio/box_annotations.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <tinyxml2.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "../config/config_text.h"
#include "data_files/decimal_number.h"
#include "studio/box_checks.h"
#include "studio/coco_segmentation.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/log.h"
#include "studio/path_within.h"
#include "studio/yolo_masks.h"

namespace studio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// A whole number from a JSON field: an integer, or a float with no fraction;
// anything else (a string "100", 100.9, NaN) is refused naming the field
// (issue 59, items 10 and 11: they were a raw type_error, or truncated).
int64_t wholeNumber(const json& v, const std::string& where, const char* field) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  throw DataError(where + ": \"" + field + "\" is " + shown(v) + ", not a whole number");
}

// The line and column of a byte offset in text, for a JSON syntax error.
std::string lineAndColumn(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const size_t start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const size_t column = start == std::string::npos ? offset : offset - start - 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column + 1);
}

// A box checked against its image: DataError (fail), clipped into the image,
// or false (skip). Zero or negative sizes are always refused.
bool checkBox(AnnotatedBox& b, const AnnotatedImage& im, const std::string& where, BadBoxes bad, BoxAnnotations& out) {
  if (!(b.w > 0) || !(b.h > 0) || !std::isfinite(b.x) || !std::isfinite(b.y))
    throw DataError(where + ": the box [" + fmt(b.x) + ", " + fmt(b.y) + ", " + fmt(b.w) + ", " + fmt(b.h) +
                    "] has no width or height (x, y, w, h in pixels)");
  const double W = static_cast<double>(im.width), H = static_cast<double>(im.height);
  const bool outside = b.x < -1 || b.y < -1 || b.x + b.w > W + 1 || b.y + b.h > H + 1;
  if (!outside) return true;
  if (bad == BadBoxes::skip) {
    ++out.skipped;
    return false;
  }
  if (bad == BadBoxes::fail)
    throw DataError(where + ": the box [" + fmt(b.x) + ", " + fmt(b.y) + ", " + fmt(b.w) + ", " + fmt(b.h) +
                    "] extends past its image " + im.file + " (" + std::to_string(im.width) + " x " +
                    std::to_string(im.height) +
                    ") by more than a pixel; data.on_bad_box clip or skip "
                    "accepts such boxes");
  const double x2 = std::clamp(b.x + b.w, 0.0, W), y2 = std::clamp(b.y + b.h, 0.0, H);
  b.x = std::clamp(b.x, 0.0, W);
  b.y = std::clamp(b.y, 0.0, H);
  b.w = x2 - b.x;
  b.h = y2 - b.y;
  if (!(b.w > 0) || !(b.h > 0)) throw DataError(where + ": the box lies wholly outside its image " + im.file);
  b.area = b.w * b.h;
  ++out.clipped;
  return true;
}

// Under `root` (not root itself) once links and ".." are resolved (issue
// 59, item 14: a file name with ../, an absolute one or a link read a file
// anywhere).
bool underRoot(const fs::path& file, const fs::path& root) {
  const fs::path f = resolvedPath(file), r = resolvedPath(root);
  return f != r && isWithin(f, r);
}

void confined(const std::string& file, const std::string& root, const std::string& where) {
  if (!root.empty() && !underRoot(file, root))
    throw DataError(where + ": " + file + " is outside " + root +
                    " (through \"..\", an absolute path or a link): images and labels are read from under the "
                    "images' folder only; copy the file there, or choose the folder that holds it");
}

// The image a file names, under root; where: the entry, for the message.
std::string imagePath(const std::string& root, const std::string& name, const std::string& where) {
  const std::string file = fs::path(name).is_absolute() || root.empty() ? name : (fs::path(root) / name).string();
  confined(file, root, where);
  return file;
}

// At most kMaxBoxesPerImage boxes in an image (issue 59, item 6: 3 million
// in one YOLO label file passed summary and failed in training at 3.5 GB).
std::string tooManyBoxes(const std::string& image, const std::string& file) {
  return image + " has more than " + std::to_string(kMaxBoxesPerImage) + " boxes in " + file +
         ", more than a detector is trained on in one image (COCO's images have at most a few hundred): check "
         "its annotations";
}

void checkBoxesPerImage(const BoxAnnotations& a, const std::string& file) {
  std::vector<int64_t> count(a.images.size(), 0);
  for (const auto& b : a.boxes)
    if (++count[static_cast<size_t>(b.image)] > kMaxBoxesPerImage)
      throw DataError(tooManyBoxes(a.images[static_cast<size_t>(b.image)].file, file));
}

// ---- COCO instances JSON
// An image's side in pixels, from a COCO or VOC size: whole and from 1 to
// 2^31 - 1 (a width of 1e300 was cast to -9223372036854775808, and 128.9
// read as 128: issue 59, items 11 and 15).
int64_t imageSide(double v, const std::string& where, const char* field, const std::string& given) {
  if (std::isfinite(v) && v == std::floor(v) && v >= 1 && v <= 2147483647.0) return static_cast<int64_t>(v);
  throw DataError(where + ": \"" + field + "\" is " + given + "; give the image's " + field +
                  " in pixels, a whole number from 1 to 2147483647");
}

// An annotation as read, before its image and category are looked up
// (the file may list them after its annotations).
struct CocoBox {
  size_t index = 0;
  std::string id;  // its "id" as the file gives it, for messages; empty when none
  int64_t image = 0, category = 0;
  double x = 0, y = 0, w = 0, h = 0, area = 0;
  bool crowd = false;
  json segmentation;  // kept when the masks are read
};

// Reads COCO's "images" and "annotations" entries as the JSON parser meets
// them and drops each from the tree, so that a file takes its text and its
// boxes in memory, not a tree of it (issue 59, item 6: about 7x its size).
class CocoReader {
 public:
  CocoReader(const std::string& file, const std::string& root, bool masks)
      : m_file(file), m_root(root), m_masks(masks) {}

  bool operator()(int depth, json::parse_event_t event, json& value) {
    using E = json::parse_event_t;
    if (depth == 1 && event == E::key) {
      m_part = value.get<std::string>();
      if ((m_part == "images" || m_part == "annotations") && !m_seen.insert(m_part).second)
        throw DataError(m_file + " gives \"" + m_part + "\" twice");
    } else if (depth == 1 && (event == E::array_start || event == E::array_end)) {
      m_inList = event == E::array_start && (m_part == "images" || m_part == "annotations");
      m_index = 0;
    } else if (depth == 2 && m_inList && (event == E::object_end || event == E::array_end || event == E::value)) {
      if (m_part == "images")
        image(value, m_index++);
      else
        annotation(value, m_index++);
      return false;  // read: not kept in the tree
    }
    return true;
  }

  BoxAnnotations out;
  std::map<int64_t, size_t> imageAt;
  std::vector<CocoBox> boxes;

  std::string annotationWhere(size_t index, const std::string& id) const {
    return m_file + " annotations[" + std::to_string(index) + "]" + (id.empty() ? std::string() : " (id " + id + ")");
  }

 private:
  void image(const json& im, size_t i) {
    const std::string where = m_file + " images[" + std::to_string(i) + "]";
    if (!im.is_object() || !im.contains("id") || !im["id"].is_number_integer() || !im.contains("file_name") ||
        !im["file_name"].is_string())
      throw DataError(where + " needs an integer \"id\" and a \"file_name\"");
    AnnotatedImage a;
    a.id = im["id"].get<int64_t>();
    a.file = imagePath(m_root, im["file_name"].get<std::string>(), where);
    if (!fs::is_regular_file(a.file)) throw DataError(where + ": the image " + a.file + " does not exist");
    if (im.contains("width") && im.contains("height") && !im["width"].is_null() && !im["height"].is_null()) {
      const auto side = [&](const char* name) {
        const json& v = im[name];
        return imageSide(v.is_number() ? v.get<double>() : NAN, where, name, shown(v));
      };
      a.width = side("width");
      a.height = side("height");
    } else {
      const ImageHeader h = readImageHeader(a.file);
      a.width = h.width;
      a.height = h.height;
    }
    if (!imageAt.emplace(a.id, out.images.size()).second)
      throw DataError(where + ": image id " + std::to_string(a.id) + " is given twice");
    out.images.push_back(a);
  }

  void annotation(const json& a, size_t i) {
    CocoBox b;
    b.index = i;
    if (a.is_object() && a.contains("id")) b.id = a["id"].dump().substr(0, 40);
    const std::string where = annotationWhere(i, b.id);
    if (!a.is_object() || !a.contains("image_id") || !a.contains("category_id") || !a.contains("bbox") ||
        !a["bbox"].is_array() || a["bbox"].size() != 4)
      throw DataError(where + " needs \"image_id\", \"category_id\" and a \"bbox\" of 4 numbers");
    b.image = wholeNumber(a["image_id"], where, "image_id");
    b.category = wholeNumber(a["category_id"], where, "category_id");
    for (const auto& v : a["bbox"])
      if (!v.is_number()) throw DataError(where + ": its bbox holds something that is not a number");
    b.x = a["bbox"][0].get<double>();
    b.y = a["bbox"][1].get<double>();
    b.w = a["bbox"][2].get<double>();
    b.h = a["bbox"][3].get<double>();
    b.area = a.contains("area") && a["area"].is_number() ? a["area"].get<double>() : b.w * b.h;
    if (a.contains("iscrowd") && !a["iscrowd"].is_boolean() &&
        !(a["iscrowd"].is_number() && (a["iscrowd"] == 0 || a["iscrowd"] == 1)))
      throw DataError(where + ": \"iscrowd\" is " + shown(a["iscrowd"]) + "; give 0 or 1");
    b.crowd = a.contains("iscrowd") && (a["iscrowd"].is_boolean() ? a["iscrowd"].get<bool>() : a["iscrowd"] == 1);
    if (m_masks) {
      if (!a.contains("segmentation") || a["segmentation"].is_null())
        throw DataError(where +
                        " has no \"segmentation\": task.kind instance_segmentation needs each box's mask "
                        "(polygons or an RLE)");
      b.segmentation = a["segmentation"];
    }
    boxes.push_back(std::move(b));
  }

  const std::string& m_file;
  const std::string& m_root;
  std::string m_part;
  std::set<std::string> m_seen;
  bool m_inList = false;
  size_t m_index = 0;
  bool m_masks = false;
};

BoxAnnotations readCoco(const std::string& file, const std::string& root, BadBoxes bad, bool masks) {
  json j;
  CocoReader r(file, root, masks);
  {
    const std::string text = readFileBytes(file, "COCO annotations");
    try {
      j = json::parse(text, std::ref(r));
    } catch (const json::parse_error& e) {
      // nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: ...": where, in words.
      const std::string why = e.what();
      const size_t said = why.find("syntax error");
      throw DataError(file + " is not valid JSON at " + lineAndColumn(text, e.byte == 0 ? 0 : e.byte - 1) +
                      (said == std::string::npos ? std::string() : " (" + why.substr(said) + ")") +
                      "; NaN, Infinity and a cut-off file are not JSON");
    } catch (const json::exception& e) {  // out_of_range 406: a number beyond double's range (1e400)
      const std::string why = e.what();   // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
      throw DataError(file + " holds a number beyond the range of a double (" + why.substr(why.find(']') + 2) + ")");
    }
  }
  if (!j.is_object() || !j.contains("images") || !j.contains("annotations") || !j.contains("categories"))
    throw DataError(file + " is not a COCO instances file (it needs \"images\", \"annotations\" and \"categories\")");
  for (const char* part : {"images", "annotations", "categories"})
    if (!j[part].is_array())
      throw DataError(file + ": \"" + part + "\" must be a list (it is " + j[part].type_name() + ")");
  BoxAnnotations& out = r.out;
  out.format = "coco";
  std::map<int64_t, int64_t> labelOf;
  std::vector<BoxCategory> categories;
  for (size_t i = 0; i < j["categories"].size(); ++i) {
    const json& c = j["categories"][i];
    if (!c.is_object() || !c.contains("id") || !c["id"].is_number_integer())
      throw DataError(file + " categories[" + std::to_string(i) + "] needs an integer \"id\"");
    if (c.contains("name") && !c["name"].is_string())
      throw DataError(file + " categories[" + std::to_string(i) + "]: \"name\" is " + shown(c["name"]) +
                      ", not text (a category's name is a string: \"5\")");
    categories.push_back({c["id"].get<int64_t>(), c.value("name", std::to_string(c["id"].get<int64_t>()))});
  }
  std::sort(categories.begin(), categories.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const auto& c : categories) {
    if (labelOf.count(c.id)) throw DataError(file + ": category id " + std::to_string(c.id) + " is given twice");
    labelOf[c.id] = static_cast<int64_t>(out.categories.size());
    out.categories.push_back(c);
  }
  out.boxes.reserve(r.boxes.size());
  for (const CocoBox& a : r.boxes) {
    const auto im = r.imageAt.find(a.image);
    if (im == r.imageAt.end())
      throw DataError(r.annotationWhere(a.index, a.id) + ": image_id " + std::to_string(a.image) +
                      " is not one of the file's images");
    const auto cat = labelOf.find(a.category);
    if (cat == labelOf.end())
      throw DataError(r.annotationWhere(a.index, a.id) + ": category_id " + std::to_string(a.category) +
                      " is not one of the file's categories");
    AnnotatedBox b;
    b.image = static_cast<int64_t>(im->second);
    b.label = cat->second;
    b.x = a.x;
    b.y = a.y;
    b.w = a.w;
    b.h = a.h;
    b.area = a.area;
    b.crowd = a.crowd;
    const AnnotatedImage& image = out.images[im->second];
    if (!checkBox(b, image, r.annotationWhere(a.index, a.id), bad, out)) continue;
    out.boxes.push_back(b);
    if (masks)
      out.masks.push_back(
          cocoSegmentation(a.segmentation, image.height, image.width, r.annotationWhere(a.index, a.id)));
  }
  std::vector<CocoBox>().swap(r.boxes);
  checkBoxesPerImage(out, file);
  return std::move(out);
}

// ---- YOLO: data.yaml and a labels/*.txt per image
std::vector<BoxCategory> yoloNames(const std::string& file) {
  YAML::Node doc;
  std::string text;
  try {
    text = readFileBytes(file, "YOLO data.yaml");  // a FIFO is refused at once (it hung, issue 59)
  } catch (const InputError& e) {
    throw DataError(e.what());
  }
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw DataError(file + " is not YAML: " + e.what());
  }
  std::vector<BoxCategory> out;
  // yaml-cpp throws its own exceptions for a subscript of a scalar or an
  // entry of another type (fuzz_box_annotations found the first): each is
  // this file's fault, said as such.
  try {
    const YAML::Node names = doc.IsMap() ? doc["names"] : YAML::Node();
    if (names && names.IsSequence()) {
      for (size_t i = 0; i < names.size(); ++i) out.push_back({static_cast<int64_t>(i), names[i].as<std::string>()});
    } else if (names && names.IsMap()) {
      for (const auto& kv : names) out.push_back({kv.first.as<int64_t>(), kv.second.as<std::string>()});
      std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    } else {
      throw DataError(file + " has no \"names\": give the classes as a list, or a map of index: name");
    }
  } catch (const YAML::Exception& e) {
    throw DataError(file + ": \"names\" must be a list of class names, or a map of index: name (" + e.what() + ")");
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].id != static_cast<int64_t>(i))
      throw DataError(file + ": names must number the classes 0, 1, 2, ... (class " + std::to_string(i) +
                      " is missing)");
  return out;
}

BoxAnnotations readYolo(const std::string& file, const std::string& root, BadBoxes bad) {
  BoxAnnotations out = readYoloImages(file, root);
  for (size_t k = 0; k < out.images.size(); ++k) {
    const AnnotatedImage& im = out.images[k];
    const std::string& path = im.file;
    const std::string labels = yoloLabelFile(path);
    const std::string bytes = readYoloLabelText(labels, path);
    std::istringstream text(bytes);
    std::string line;
    int64_t boxes = 0;
    for (int n = 1; std::getline(text, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = labels + " line " + std::to_string(n);
      // What failed is named, not the line quoted (it may be a linked file's, issue 59 item 14).
      std::istringstream in(line);
      std::vector<std::string> fields;
      for (std::string f; in >> f;) fields.push_back(f);
      const std::string shape = " is not \"class cx cy w h\" (a class index and four numbers from 0 to 1)";
      if (fields.size() != 5) throw DataError(where + shape + ": it has " + std::to_string(fields.size()) + " values");
      std::array<double, 5> v{};
      for (size_t k = 0; k < 5; ++k) {
        if (!finiteDecimal(fields[k], v[k]))
          throw DataError(where + shape + ": value " + std::to_string(k + 1) + " is not a number");
      }
      const auto [cls, cx, cy, w, h2] = v;
      if (cls != std::floor(cls)) throw DataError(where + shape + ": the class " + fmt(cls) + " is not a whole number");
      if (cls < 0 || cls >= static_cast<double>(out.categories.size()))
        throw DataError(where + ": class " + fmt(cls) + " is not one of the " + std::to_string(out.categories.size()) +
                        " names of " + file);
      AnnotatedBox b;
      b.image = static_cast<int64_t>(k);
      b.label = static_cast<int64_t>(cls);
      b.w = w * static_cast<double>(im.width);
      b.h = h2 * static_cast<double>(im.height);
      b.x = cx * static_cast<double>(im.width) - b.w / 2;
      b.y = cy * static_cast<double>(im.height) - b.h / 2;
      b.area = b.w * b.h;
      if (++boxes > kMaxBoxesPerImage) throw DataError(tooManyBoxes(path, file));
      if (checkBox(b, im, where, bad, out)) out.boxes.push_back(b);
    }
  }
  return out;
}

// ---- Pascal VOC: a folder of XML files
std::string childText(const tinyxml2::XMLElement* e, const char* name) {
  const tinyxml2::XMLElement* c = e ? e->FirstChildElement(name) : nullptr;
  return c && c->GetText() ? c->GetText() : "";
}

double number(const tinyxml2::XMLElement* e, const char* name, const std::string& where) {
  const std::string t = childText(e, name);
  // Decimal only: std::stod read <xmax>0x50</xmax> as hex 80 (issue 59, item 11), and "inf" and "nan".
  double v = 0;
  if (finiteDecimal(t, v)) return v;
  throw DataError(where + ": <" + name + "> is not a number (\"" + t.substr(0, 40) + "\"; give it in decimal)");
}

BoxAnnotations readVoc(const std::string& folder, const std::string& root, BadBoxes bad) {
  BoxAnnotations out;
  out.format = "voc";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))  // a raw "directory iterator" error before (issue 59, item 15)
    throw DataError("data.annotations " + folder +
                    " is not a folder: data.annotation_format voc reads a folder of Pascal VOC .xml files (a .json "
                    "file is COCO's, a data.yaml YOLO's: set data.annotation_format to auto or to its format)");
  std::vector<std::string> files;
  int64_t deeper = 0;  // .xml files in sub-folders, which VOC's layout does not have
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".xml" || it->is_directory(ec)) continue;
    if (it.depth() == 0)
      files.push_back(it->path().string());  // a FIFO is named when it is read
    else
      ++deeper;
  }
  std::sort(files.begin(), files.end());
  const std::string below = std::to_string(deeper) + " .xml file(s) in its sub-folders, which are not read";
  if (files.empty())
    throw DataError(folder + " holds no .xml files (Pascal VOC annotations)" + (deeper ? "; " + below : "") +
                    ": data.annotations names the folder that holds them");
  if (deeper)
    log::warn("data.annotations " + folder + ": " + below + " (a VOC folder's annotations are its own files)");
  std::map<std::string, std::string> annotatedBy;  // image -> the file that annotates it
  std::map<std::string, int64_t> labelOf;          // names in the order first met
  for (const auto& file : files) {
    tinyxml2::XMLDocument doc;
    std::string xml;
    try {
      xml = readFileBytes(file, "Pascal VOC annotation");
    } catch (const InputError& e) {
      throw DataError(e.what());
    }
    // Counted before the tree is built: 144 MB of <object>s in one file took 2.4 GB (issue 59, item 6).
    int64_t objects = 0;
    for (size_t at = xml.find("<object"); at != std::string::npos; at = xml.find("<object", at + 7))
      if (++objects > kMaxBoxesPerImage)
        throw DataError(file + " holds more than " + std::to_string(kMaxBoxesPerImage) +
                        " <object>s, more than a detector is trained on in one image (COCO's images have at most a "
                        "few hundred): check its annotations");
    if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS)
      throw DataError(file + " is not XML: " + (doc.ErrorStr() ? doc.ErrorStr() : "unreadable"));
    const tinyxml2::XMLElement* a = doc.FirstChildElement("annotation");
    if (!a || childText(a, "filename").empty())
      throw DataError(file + " is not a Pascal VOC annotation (no <annotation> with a <filename>)");
    AnnotatedImage im;
    im.file = imagePath(root, childText(a, "filename"), file);
    if (!fs::is_regular_file(im.file))
      throw DataError(file + ": the image " + im.file + " of its <filename> does not exist");
    // Counted twice before, its boxes in two images (issue 59, item 15).
    if (const auto [first, fresh] = annotatedBy.emplace(im.file, file); !fresh)
      throw DataError(file + " and " + first->second + " both annotate the image " + im.file +
                      ": give each image one annotation file");
    im.id = static_cast<int64_t>(out.images.size());
    const tinyxml2::XMLElement* size = a->FirstChildElement("size");
    if (size && !childText(size, "width").empty()) {
      const std::string where = file + " <size>";
      const auto side = [&](const char* name) {
        return imageSide(number(size, name, where), where, name, childText(size, name).substr(0, 40));
      };
      im.width = side("width");
      im.height = side("height");
    } else {
      const ImageHeader h = readImageHeader(im.file);
      im.width = h.width;
      im.height = h.height;
    }
    out.images.push_back(im);
    int n = 0;
    for (const auto* o = a->FirstChildElement("object"); o; o = o->NextSiblingElement("object")) {
      const std::string where = file + " <object> " + std::to_string(++n);
      const std::string name = childText(o, "name");
      if (name.empty()) throw DataError(where + " has no <name>");
      const auto* box = o->FirstChildElement("bndbox");
      if (!box) throw DataError(where + " (" + name + ") has no <bndbox>");
      const auto [it, fresh] = labelOf.emplace(name, static_cast<int64_t>(out.categories.size()));
      if (fresh) out.categories.push_back({it->second, name});
      // VOC's pixels are 1-based and inclusive: xmin 1 is the first column
      // and xmax W the last, so the box covers x from xmin - 1 to xmax, as
      // Detectron2 reads them (load_voc_instances: bbox[0] -= 1, bbox[1] -= 1).
      // Read 1 px smaller on the right and bottom before (issue 60, item 8).
      AnnotatedBox b;
      b.image = static_cast<int64_t>(out.images.size() - 1);
      b.label = it->second;
      b.x = number(box, "xmin", where) - 1;
      b.y = number(box, "ymin", where) - 1;
      b.w = number(box, "xmax", where) - b.x;
      b.h = number(box, "ymax", where) - b.y;
      b.area = b.w * b.h;
      b.crowd = childText(o, "difficult") == "1";
      if (checkBox(b, im, where, bad, out)) out.boxes.push_back(b);
    }
  }
  // Categories sorted by name, as an image folder's classes are.
  std::vector<BoxCategory> sorted = out.categories;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<int64_t> newLabel(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    newLabel[static_cast<size_t>(sorted[i].id)] = static_cast<int64_t>(i);
    sorted[i].id = static_cast<int64_t>(i);
  }
  for (auto& b : out.boxes) b.label = newLabel[static_cast<size_t>(b.label)];
  out.categories = sorted;
  return out;
}

}  // namespace

// An image's label file: labels/ in place of the last images/ of its path,
// else beside it; with a .txt suffix.
std::string yoloLabelFile(const std::string& image) {
  const fs::path p(image);
  std::string s = p.parent_path().string();
  const size_t at = s.rfind("images");
  fs::path dir = at == std::string::npos ? p.parent_path() : fs::path(s.substr(0, at) + "labels" + s.substr(at + 6));
  if (!fs::is_directory(dir)) dir = p.parent_path();
  return (dir / p.stem()).string() + ".txt";
}

BoxAnnotations readYoloImages(const std::string& file, const std::string& root) {
  BoxAnnotations out;
  out.format = "yolo";
  out.categories = yoloNames(file);
  std::vector<std::string> images;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && isImageFileName(e.path().filename().string())) images.push_back(e.path().string());
  std::sort(images.begin(), images.end());
  for (const auto& path : images) {
    confined(path, root, file + "'s image");  // a link under root to a file elsewhere
    AnnotatedImage im;
    im.file = path;
    im.id = static_cast<int64_t>(out.images.size());
    const ImageHeader h = readImageHeader(path);
    im.width = h.width;
    im.height = h.height;
    out.images.push_back(im);
  }
  return out;
}

std::string readYoloLabelText(const std::string& labels, const std::string& image) {
  std::error_code ec;
  const fs::file_status st = fs::status(labels, ec);
  if (st.type() == fs::file_type::not_found) return {};  // no objects: a negative
  if (fs::is_symlink(labels, ec)) confined(labels, fs::path(labels).parent_path().string(), "YOLO label file");
  // A FIFO, a folder or a device in its place is not "no objects" (issue 59, item 4).
  try {
    return readFileBytes(labels, "YOLO label file");
  } catch (const InputError& e) {
    throw DataError(std::string(e.what()) + ": the labels of the image " + image +
                    " must be a text file (or absent, for an image without objects)");
  }
}

BoxAnnotations readBoxAnnotations(const std::string& annotations, const std::string& root, const std::string& format,
                                  BadBoxes bad, bool masks) {
  std::string f = format;
  if (f == "auto") {
    const std::string ext = fs::path(annotations).extension().string();
    f = fs::is_directory(annotations)       ? "voc"
        : ext == ".json"                    ? "coco"
        : (ext == ".yaml" || ext == ".yml") ? "yolo"
                                            : "";
    if (f.empty())
      throw DataError("data.annotations " + annotations +
                      " is none of the formats: a COCO .json file, a YOLO data.yaml, or a folder of Pascal VOC .xml "
                      "files (or name it in data.annotation_format)");
  }
  if (!fs::exists(annotations)) throw DataError("data.annotations " + annotations + " does not exist");
  if (f == "coco") return readCoco(annotations, root, bad, masks);
  if (f == "yolo") return masks ? readYoloInstances(annotations, root) : readYolo(annotations, root, bad);
  if (masks)
    throw DataError("data.annotations " + annotations + " is " + f +
                    ": task.kind instance_segmentation reads each box's mask from a COCO instances JSON (polygons "
                    "or RLE) or YOLO's polygon labels; convert it, or train task.kind detection on its boxes");
  if (f == "voc") return readVoc(annotations, root, bad);
  throw DataError("data.annotation_format must be auto, coco, yolo or voc (got \"" + format + "\")");
}

void checkAnnotatedSize(const AnnotatedImage& image, const std::string& file, int64_t height, int64_t width) {
  if (height != image.height || width != image.width)
    throw DataError(file + " is " + std::to_string(width) + "x" + std::to_string(height) +
                    " pixels, but its annotations say " + std::to_string(image.width) + "x" +
                    std::to_string(image.height) + ": its boxes would not fit it");
}

}  // namespace studio
