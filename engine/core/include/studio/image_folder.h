#pragma once
// The layout of an image folder, read from the file system only (nothing is
// decoded):
//   root/<class>/...                        one folder per class, or
//   root/train/<class>/..., root/test/<class>/... and optionally root/val/<class>/...
// Image files (.png .jpg .jpeg .bmp .pgm .ppm, any case) are found in each class folder
// and its sub-folders; other files and hidden ones are left out. Class names
// are the training class folders' names, sorted; files are sorted by path.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

namespace studio {

struct ImageFolderSplit {
  std::vector<std::string> files;  // full paths
  std::vector<int64_t> labels;     // index into classNames
};

struct ImageFolderScan {
  std::string root;
  std::vector<std::string> classNames;
  bool splitFolders = false;          // train/ (test/, val/) beneath the root
  ImageFolderSplit train, test, val;  // test and val empty without their folders
  int64_t otherFiles = 0;             // files that are not images, left out
};

// Throws DataError naming the folder: missing or unreadable, a class folder
// without images, fewer than 2 classes, a test or val class the training
// folder lacks.
ImageFolderScan scanImageFolder(const std::string& root);

// The image files under a folder and its sub-folders (hidden ones left out),
// sorted by path; `other` counts the files that are not images. Throws
// DataError when the folder cannot be read.
std::vector<std::string> imageFilesUnder(const std::string& dir, int64_t& other);

}  // namespace studio
