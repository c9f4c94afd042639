#include "studio/image_folder.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "studio/errors.h"
#include "studio/image_file.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

std::vector<fs::path> subfolders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!hidden(it->path()) && it->is_directory(ec)) out.push_back(it->path());
  if (ec) throw DataError("cannot read folder " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Image files under a class folder (and its sub-folders), sorted.
std::vector<std::string> imagesUnder(const fs::path& dir, int64_t& other) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code entry;  // a dangling link's target "not found" is not the walk's error
    if (hidden(it->path())) {
      if (it->is_directory(entry)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(entry)) continue;
    // Anything else named as an image is one: a dangling link, a FIFO or a
    // device is then an unreadable file (data.on_bad_file says what
    // happens), never left out silently; reading it never blocks.
    if (isImageFileName(it->path().filename().string()))
      files.push_back(it->path().string());
    else
      ++other;
  }
  if (ec) throw DataError("cannot read folder " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::string> imageFilesUnder(const std::string& dir, int64_t& other) { return imagesUnder(dir, other); }

namespace {

// Class name -> its images, for every class folder directly under dir.
std::map<std::string, std::vector<std::string>> classFolders(const fs::path& dir, int64_t& other) {
  std::map<std::string, std::vector<std::string>> out;
  for (const fs::path& sub : subfolders(dir)) out[sub.filename().string()] = imagesUnder(sub, other);
  return out;
}

}  // namespace

ImageFolderScan scanImageFolder(const std::string& rootText) {
  ImageFolderScan scan;
  scan.root = rootText;
  const fs::path root(rootText);
  std::error_code ec;
  if (!fs::exists(root, ec))
    throw DataError("data.root " + rootText +
                    " does not exist; set it to the folder that holds one folder of images "
                    "per class (or train/ and test/ folders of them)");
  if (!fs::is_directory(root, ec))
    throw DataError("data.root " + rootText +
                    " is a file, not a folder; data.format image_folder needs the folder "
                    "that holds one folder of images per class");

  const std::vector<fs::path> top = subfolders(root);
  auto named = [&](const char* n) { return std::find(top.begin(), top.end(), root / n) != top.end(); };
  // train/ (with test/ or val/) and nothing else: the split layout.
  scan.splitFolders = named("train") && std::all_of(top.begin(), top.end(), [&](const fs::path& p) {
                        const std::string n = p.filename().string();
                        return n == "train" || n == "test" || n == "val";
                      });
  const fs::path trainDir = scan.splitFolders ? root / "train" : root;
  auto train = classFolders(trainDir, scan.otherFiles);
  if (train.empty())
    throw DataError("data.root " + rootText +
                    " holds no class folders: put the images of each class in a folder of "
                    "its own, named after the class (" +
                    trainDir.string() + "/<class>/image.png)");
  for (const auto& [name, files] : train)
    if (files.empty())
      throw DataError("class folder " + (trainDir / name).string() +
                      " holds no images (.png, .jpg, .jpeg, .bmp, .pgm or .ppm); add some or remove the folder");
  if (train.size() < 2)
    throw DataError("data.root " + rootText + " holds 1 class folder (" + train.begin()->first +
                    "); a classifier needs at least 2 classes");
  for (const auto& [name, files] : train) scan.classNames.push_back(name);
  auto fill = [&](ImageFolderSplit& split, const std::map<std::string, std::vector<std::string>>& folders,
                  const fs::path& dir) {
    for (const auto& [name, files] : folders) {
      const auto it = std::find(scan.classNames.begin(), scan.classNames.end(), name);
      if (it == scan.classNames.end())
        throw DataError("class folder " + (dir / name).string() + " has no counterpart in " + trainDir.string() +
                        ": every class must have training images");
      const auto label = static_cast<int64_t>(it - scan.classNames.begin());
      for (const auto& f : files) {
        split.files.push_back(f);
        split.labels.push_back(label);
      }
    }
  };
  fill(scan.train, train, trainDir);
  if (scan.splitFolders) {
    for (const char* part : {"test", "val"}) {
      if (!named(part)) continue;
      auto folders = classFolders(root / part, scan.otherFiles);
      fill(std::string(part) == "test" ? scan.test : scan.val, folders, root / part);
    }
  }
  return scan;
}

}  // namespace studio
