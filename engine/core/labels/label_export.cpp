#include "studio/label_export.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/label_journal.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

void requireEmptyOut(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec)))
    throw InputError("the export's folder " + out +
                     " exists and is not empty: choose a new folder (nothing there is written over)");
  fs::create_directories(out, ec);
  if (ec) throw IoError("cannot make the folder " + out + ": " + ec.message());
}

// A copy of folder/image at to (its folders made).
// Every export's files are named by their image (copyImage comes first),
// which is refused unless it names a file inside the folder.
void copyImage(const std::string& folder, const std::string& image, const fs::path& to) {
  requireNameInFolder(image, "the export");
  const fs::path from = fs::path(folder) / image;
  std::error_code ec;
  if (!fs::is_regular_file(from, ec)) throw InputError("the labelled image " + from.string() + " is missing");
  fs::create_directories(to.parent_path(), ec);
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw IoError("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string xmlEscaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// A category's place among the categories (YOLO's class index), its name.
size_t placeOf(const std::vector<BoxCategory>& categories, int64_t id) {
  const auto it = std::find_if(categories.begin(), categories.end(), [&](const BoxCategory& c) { return c.id == id; });
  if (it == categories.end()) throw InputError("a box has category " + std::to_string(id) + ", which is none");
  return static_cast<size_t>(it - categories.begin());
}

}  // namespace

int64_t exportClassFolders(const std::string& folder, const std::map<std::string, ImageLabel>& labels,
                           const std::string& out) {
  requireEmptyOut(out);
  for (const auto& [image, label] : labels) {
    if (label.label.find('/') != std::string::npos || label.label == "." || label.label == "..")
      throw InputError("the class \"" + label.label + "\" cannot name a folder: rename it first");
    copyImage(folder, image, fs::path(out) / label.label / image);
  }
  return static_cast<int64_t>(labels.size());
}

int64_t exportYolo(const std::string& folder, const std::map<std::string, ImageBoxes>& images,
                   const std::vector<BoxCategory>& categories, const std::string& out) {
  requireEmptyOut(out);
  std::string yaml = "# written by Training Studio's Label tab\npath: .\ntrain: images\nnames:\n";
  for (const BoxCategory& c : categories) {
    std::string quoted;  // a YAML double-quoted scalar
    for (char ch : c.name) quoted += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
    yaml += "  - \"" + quoted + "\"\n";
  }
  writeFileAtomically(out + "/data.yaml", yaml);
  for (const auto& [image, b] : images) {
    const fs::path to = fs::path(out) / "images" / image;
    copyImage(folder, image, to);
    std::string lines;
    const double W = static_cast<double>(b.width), H = static_cast<double>(b.height);
    for (const LabelBox& x : b.boxes)
      lines += std::to_string(placeOf(categories, x.category)) + " " + number((x.x + x.width / 2) / W) + " " +
               number((x.y + x.height / 2) / H) + " " + number(x.width / W) + " " + number(x.height / H) + "\n";
    const fs::path label = (fs::path(out) / "labels" / image).replace_extension(".txt");
    std::error_code ec;
    fs::create_directories(label.parent_path(), ec);
    writeFileAtomically(label.string(), lines);
  }
  return static_cast<int64_t>(images.size());
}

int64_t exportVoc(const std::string& folder, const std::map<std::string, ImageBoxes>& images,
                  const std::vector<BoxCategory>& categories, const std::string& out) {
  requireEmptyOut(out);
  std::error_code ec;
  fs::create_directories(fs::path(out) / "Annotations", ec);
  for (const auto& [image, b] : images) {
    copyImage(folder, image, fs::path(out) / "JPEGImages" / image);
    std::string xml = "<annotation>\n  <filename>" + xmlEscaped(image) + "</filename>\n  <size><width>" +
                      std::to_string(b.width) + "</width><height>" + std::to_string(b.height) +
                      "</height><depth>3</depth></size>\n";
    for (const LabelBox& x : b.boxes)  // VOC's pixels: 1-based, inclusive
      xml += "  <object><name>" + xmlEscaped(categories[placeOf(categories, x.category)].name) +
             "</name><difficult>0</difficult><bndbox><xmin>" + number(x.x + 1) + "</xmin><ymin>" + number(x.y + 1) +
             "</ymin><xmax>" + number(x.x + x.width) + "</xmax><ymax>" + number(x.y + x.height) +
             "</ymax></bndbox></object>\n";
    xml += "</annotation>\n";
    std::string stem = image;
    std::replace(stem.begin(), stem.end(), '/', '_');  // one folder of annotations
    writeFileAtomically((fs::path(out) / "Annotations" / fs::path(stem).replace_extension(".xml")).string(), xml);
  }
  return static_cast<int64_t>(images.size());
}

}  // namespace studio
