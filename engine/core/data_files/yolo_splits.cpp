#include "studio/yolo_splits.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <sstream>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/path_within.h"

namespace studio {
namespace {
namespace fs = std::filesystem;

constexpr std::array<const char*, 3> kKeys{"train", "val", "test"};

// One split's entries resolved: its folders, and the images its lists name.
struct Entries {
  std::string written;  // as in the data.yaml, for messages
  std::vector<fs::path> folders;
  std::set<fs::path> files;
  bool given() const { return !written.empty(); }
  bool sameAs(const Entries& o) const { return folders == o.folders && files == o.files; }
  bool holds(const fs::path& image) const {
    return files.count(image) > 0 ||
           std::any_of(folders.begin(), folders.end(), [&](const fs::path& f) { return isWithin(image, f); });
  }
};

std::string scalar(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) throw DataError(where + " must be a folder, a .txt list of images, or a list of those");
  return n.as<std::string>();
}

void addEntry(Entries& e, const std::string& entry, const fs::path& base, const fs::path& root,
              const std::string& where) {
  fs::path x = fs::path(entry).is_absolute() ? fs::path(entry) : base / entry;
  std::error_code ec;
  if (!fs::exists(x, ec) && entry.rfind("../", 0) == 0) x = base / entry.substr(3);  // Roboflow's form
  if (!fs::exists(x, ec))
    throw DataError(where + " \"" + entry + "\" is neither a folder nor a list of images (looked for " + x.string() +
                    ")");
  x = resolvedPath(x);
  if (!isWithin(x, root))
    throw DataError(where + " \"" + entry + "\" is " + x.string() + ", outside data.root " + root.string() +
                    ": set data.root to a folder that holds every split");
  if (fs::is_directory(x, ec)) {
    e.folders.push_back(x);
    return;
  }
  std::string bytes;
  try {
    bytes = readFileBytes(x.string(), "YOLO image list");  // a FIFO is refused at once
  } catch (const InputError& e) {
    throw DataError(where + " " + e.what());
  }
  std::istringstream lines(bytes);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    line.erase(0, line.find_first_not_of(" \t"));
    if (line.empty()) continue;
    const fs::path image = resolvedPath(fs::path(line).is_absolute() ? fs::path(line) : x.parent_path() / line);
    if (!isWithin(image, root))
      throw DataError(x.string() + " line " + std::to_string(n) + " names " + image.string() + ", outside data.root " +
                      root.string() + ": set data.root to a folder that holds every split");
    e.files.insert(image);
  }
}

}  // namespace

YoloSplits yoloSplitsOf(const std::string& dataYaml, const std::string& root, const BoxAnnotations& a) {
  YoloSplits out;
  YAML::Node doc;
  try {
    doc = YAML::Load(readFileBytes(dataYaml, "YOLO data.yaml"));
  } catch (const YAML::Exception& e) {
    throw DataError(dataYaml + " is not YAML: " + e.what());
  }
  if (!doc.IsMap()) return out;
  const fs::path folder = resolvedPath(fs::path(dataYaml).parent_path());
  const fs::path rootPath = resolvedPath(root);
  std::array<Entries, 3> split;
  try {
    fs::path base = folder;
    if (const YAML::Node path = doc["path"]; path && !path.IsNull())
      base = resolvedPath(folder / scalar(path, dataYaml + "'s path:"));
    for (size_t k = 0; k < kKeys.size(); ++k) {
      const YAML::Node n = doc[kKeys[k]];
      if (!n || n.IsNull()) continue;
      const std::string where = dataYaml + "'s " + kKeys[k] + ":";
      if (n.IsSequence()) {
        for (const auto& one : n) {
          const std::string entry = scalar(one, where);
          split[k].written += (split[k].written.empty() ? "" : ", ") + entry;
          addEntry(split[k], entry, base, rootPath, where);
        }
      } else {
        split[k].written = scalar(n, where);
        addEntry(split[k], split[k].written, base, rootPath, where);
      }
    }
  } catch (const YAML::Exception& e) {
    throw DataError(dataYaml + ": its path:, train:, val: and test: must be folders or lists (" + e.what() + ")");
  }
  if (!split[0].given() && !split[1].given() && !split[2].given()) return out;
  if (!split[0].given())
    throw DataError(dataYaml + " gives val: or test: but no train:: name the training images' folder too");
  for (size_t k = 1; k < 3; ++k)
    if (split[k].given() && split[k].sameAs(split[0])) {
      out.note += std::string(out.note.empty() ? "" : "; ") + kKeys[k] + ": is train:'s images";
      split[k] = Entries{};
    }

  std::array<int64_t, 3> counts{0, 0, 0};
  out.of.reserve(a.images.size());
  for (const auto& image : a.images) {
    const fs::path p = resolvedPath(image.file);
    YoloSplit s = YoloSplit::none;
    for (size_t k = 0; k < 3; ++k) {
      if (!split[k].given() || !split[k].holds(p)) continue;
      if (s != YoloSplit::none)
        throw DataError(image.file + " is in " + dataYaml + "'s " + kKeys[static_cast<size_t>(s) - 1] + ": and its " +
                        kKeys[k] + ":, so it would be tested on what it trained on: keep each image in one split");
      s = static_cast<YoloSplit>(k + 1);
      ++counts[k];
    }
    out.of.push_back(s);
  }
  for (size_t k = 0; k < 3; ++k)
    if (split[k].given() && counts[k] == 0)
      throw DataError(dataYaml + "'s " + kKeys[k] + ": \"" + split[k].written + "\" holds no image under data.root " +
                      root);
  out.train = split[0].written;
  out.val = split[1].written;
  out.test = split[2].written;
  return out;
}

}  // namespace studio
