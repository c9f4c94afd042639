#include "studio/box_label_store.h"

#include <algorithm>
#include <set>

#include "studio/errors.h"

namespace studio {
namespace {

nlohmann::json boxesJson(const ImageBoxes& b) {
  nlohmann::json boxes = nlohmann::json::array();
  for (const LabelBox& x : b.boxes) boxes.push_back({x.x, x.y, x.width, x.height, x.category, x.madeBy});
  return boxes;
}

}  // namespace

BoxLabelStore::BoxLabelStore(const std::string& cocoJson) : m_path(cocoJson), m_journal(cocoJson, "boxes file") {
  Contents c = parse(m_journal.bytesRead());
  m_images = std::move(c.images);
  m_categories = std::move(c.categories);
  for (const nlohmann::json& change : m_journal.replayed()) apply(change, true);
}

BoxLabelStore::Contents BoxLabelStore::parse(const std::string& bytes) const {
  Contents out;
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) return out;
  const nlohmann::json doc = nlohmann::json::parse(bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw InputError("boxes file " + m_path + " is not a JSON object (a COCO instances file)");
  auto where = [&](const char* list, size_t i, const nlohmann::json& entry) {
    std::string w = m_path + " " + list + "[" + std::to_string(i) + "]";
    if (entry.is_object() && entry.contains("id") && entry["id"].is_number_integer())
      w += " (id " + std::to_string(entry["id"].get<int64_t>()) + ")";
    return w;
  };
  std::set<int64_t> categoryIds;
  const nlohmann::json none = nlohmann::json::array();
  const nlohmann::json& categories = doc.contains("categories") ? doc["categories"] : none;
  for (size_t i = 0; i < categories.size(); ++i) {
    const nlohmann::json& c = categories[i];
    if (!c.is_object() || !c.contains("id") || !c["id"].is_number_integer() || !c.contains("name") ||
        !c["name"].is_string())
      throw InputError(where("categories", i, c) + ": a category needs an integer id and a name");
    if (!categoryIds.insert(c["id"].get<int64_t>()).second)
      throw InputError(where("categories", i, c) + ": the id is given twice");
    out.categories.push_back({c["id"].get<int64_t>(), c["name"].get<std::string>()});
  }
  std::map<int64_t, std::string> fileOf;
  const nlohmann::json& images = doc.contains("images") ? doc["images"] : none;
  for (size_t i = 0; i < images.size(); ++i) {
    const nlohmann::json& im = images[i];
    if (!im.is_object() || !im.contains("id") || !im["id"].is_number_integer() || !im.contains("file_name") ||
        !im["file_name"].is_string() || !im.contains("width") || !im["width"].is_number() || !im.contains("height") ||
        !im["height"].is_number())
      throw InputError(where("images", i, im) + ": an image needs an integer id, its file_name, width and height");
    const std::string file = im["file_name"].get<std::string>();
    requireNameInFolder(file, where("images", i, im));
    if (!fileOf.emplace(im["id"].get<int64_t>(), file).second)
      throw InputError(where("images", i, im) + ": the id is given twice");
    if (out.images.count(file)) throw InputError(where("images", i, im) + ": " + file + " is listed twice");
    out.images[file] = {im["width"].get<int64_t>(), im["height"].get<int64_t>(), {}};
  }
  std::set<int64_t> annotationIds;
  const nlohmann::json& annotations = doc.contains("annotations") ? doc["annotations"] : none;
  for (size_t i = 0; i < annotations.size(); ++i) {
    const nlohmann::json& a = annotations[i];
    const std::string at = where("annotations", i, a);
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("image_id") ||
        !a.contains("category_id") || !a.contains("bbox") || !a["bbox"].is_array() || a["bbox"].size() != 4)
      throw InputError(at + ": an annotation needs an integer id, image_id, category_id and a bbox of 4 numbers");
    if (!annotationIds.insert(a["id"].get<int64_t>()).second) throw InputError(at + ": the id is given twice");
    const auto image = fileOf.find(a["image_id"].get<int64_t>());
    if (image == fileOf.end())
      throw InputError(at + ": image_id " + a["image_id"].dump() + " is none of the file's images");
    LabelBox b;
    b.x = a["bbox"][0].get<double>();
    b.y = a["bbox"][1].get<double>();
    b.width = a["bbox"][2].get<double>();
    b.height = a["bbox"][3].get<double>();
    b.category = a["category_id"].get<int64_t>();
    b.madeBy = a.value("made_by", std::string("person"));
    if (!categoryIds.count(b.category))
      throw InputError(at + ": category_id " + std::to_string(b.category) + " is none of the file's categories");
    requireKnownMaker(b.madeBy, at);
    ImageBoxes& im = out.images[image->second];
    if (!(b.width > 0 && b.height > 0) || b.x < 0 || b.y < 0 || b.x + b.width > static_cast<double>(im.width) + 1e-6 ||
        b.y + b.height > static_cast<double>(im.height) + 1e-6)
      throw InputError(at + ": the box [" + a["bbox"][0].dump() + ", " + a["bbox"][1].dump() + ", " +
                       a["bbox"][2].dump() + ", " + a["bbox"][3].dump() + "] is not within its image " + image->second +
                       " (" + std::to_string(im.width) + " x " + std::to_string(im.height) + ") or has no area");
    im.boxes.push_back(b);
  }
  return out;
}

void BoxLabelStore::check(const std::string& file, const ImageBoxes& b) const {
  if (file.empty()) throw InputError("boxes need an image");
  requireNameInFolder(file, "boxes");
  if (b.width <= 0 || b.height <= 0) throw InputError("the image " + file + " needs its size for its boxes");
  for (const LabelBox& x : b.boxes) {
    if (!std::any_of(m_categories.begin(), m_categories.end(),
                     [&](const BoxCategory& c) { return c.id == x.category; }))
      throw InputError("a box of " + file + " has category " + std::to_string(x.category) + ", which is none");
    if (!(x.width > 0 && x.height > 0) || x.x < 0 || x.y < 0 || x.x + x.width > static_cast<double>(b.width) + 1e-6 ||
        x.y + x.height > static_cast<double>(b.height) + 1e-6)
      throw InputError("a box of " + file + " is not within the image or has no area");
    requireKnownMaker(x.madeBy);
  }
}

void BoxLabelStore::apply(const nlohmann::json& j, bool record) {
  try {
    const std::string named = j.contains("image")   ? j["image"].get<std::string>()
                              : j.contains("clear") ? j["clear"].get<std::string>()
                                                    : std::string("-");
    if (!nameInFolder(named)) return;  // an image outside the folder: left out
    if (j.contains("image") && j.contains("boxes")) {
      ImageBoxes b{j.at("width").get<int64_t>(), j.at("height").get<int64_t>(), {}};
      for (const auto& x : j["boxes"])
        b.boxes.push_back({x.at(0).get<double>(), x.at(1).get<double>(), x.at(2).get<double>(), x.at(3).get<double>(),
                           x.at(4).get<int64_t>(), x.at(5).get<std::string>()});
      m_images[j["image"].get<std::string>()] = std::move(b);
    } else if (j.contains("clear")) {
      m_images.erase(j["clear"].get<std::string>());
    } else if (j.contains("category")) {
      const int64_t id = j["category"].get<int64_t>();
      const std::string name = j.at("name").get<std::string>();
      auto it =
          std::find_if(m_categories.begin(), m_categories.end(), [&](const BoxCategory& c) { return c.id == id; });
      if (it == m_categories.end())
        m_categories.push_back({id, name});
      else
        it->name = name;
    } else {
      return;
    }
  } catch (const nlohmann::json::exception&) {
    return;  // a change this version does not read: left out, as a torn line is
  }
  if (record) m_changes.push_back(j);
}

void BoxLabelStore::setBoxes(const std::string& file, const ImageBoxes& boxes) {
  check(file, boxes);
  const nlohmann::json change = {
      {"image", file}, {"width", boxes.width}, {"height", boxes.height}, {"boxes", boxesJson(boxes)}};
  m_journal.append(change);
  apply(change, true);
}

void BoxLabelStore::clear(const std::string& file) {
  const nlohmann::json change = {{"clear", file}};
  m_journal.append(change);
  apply(change, true);
}

int64_t BoxLabelStore::addCategory(const std::string& name) {
  if (name.empty()) throw InputError("a category needs a name");
  int64_t id = 1;
  for (const BoxCategory& c : m_categories) id = std::max(id, c.id + 1);
  renameCategory(id, name);
  return id;
}

void BoxLabelStore::renameCategory(int64_t id, const std::string& name) {
  if (name.empty()) throw InputError("a category needs a name");
  const nlohmann::json change = {{"category", id}, {"name", name}};
  m_journal.append(change);
  apply(change, true);
}

std::string BoxLabelStore::compact() {
  std::string merged;
  if (m_journal.changedOnDisk()) {
    // Another program's edits: its images and categories, this store's changes on top.
    Contents theirs = parse(m_journal.fileBytes());
    m_images = std::move(theirs.images);
    m_categories = std::move(theirs.categories);
    for (const nlohmann::json& change : m_changes) apply(change, false);
    merged = m_path + " was changed by another program: its contents kept, this window's " +
             std::to_string(m_changes.size()) + " changes on top";
  }
  nlohmann::json doc = {{"images", nlohmann::json::array()},
                        {"annotations", nlohmann::json::array()},
                        {"categories", nlohmann::json::array()}};
  int64_t imageId = 0, annotationId = 0;
  for (const auto& [file, b] : m_images) {
    doc["images"].push_back({{"id", ++imageId}, {"file_name", file}, {"width", b.width}, {"height", b.height}});
    for (const LabelBox& x : b.boxes)
      doc["annotations"].push_back({{"id", ++annotationId},
                                    {"image_id", imageId},
                                    {"category_id", x.category},
                                    {"bbox", {x.x, x.y, x.width, x.height}},
                                    {"area", x.width * x.height},
                                    {"iscrowd", 0},
                                    {"made_by", x.madeBy}});
  }
  for (const BoxCategory& c : m_categories) doc["categories"].push_back({{"id", c.id}, {"name", c.name}});
  m_journal.writeFile(doc.dump(1) + "\n");
  m_changes.clear();
  return merged;
}

}  // namespace studio
