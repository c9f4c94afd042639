#pragma once
// The Label tab's labels in the layouts other tools read (issue 62, item
// 1): a classes file as class folders (the image-folder layout), boxes as
// YOLO (data.yaml, images/, labels/) or Pascal VOC (JPEGImages/,
// Annotations/). The images are copied, never moved or linked (the
// originals are never touched); only labelled images go (an unlabelled one
// in a YOLO or VOC folder would read as an image without objects).
// Torch-free. Thread: the caller's.

#include <cstdint>
#include <map>
#include <string>

#include "studio/box_label_store.h"
#include "studio/label_store.h"

namespace studio {

// Each returns how many images it wrote. Throws InputError when out exists
// and is not an empty folder (nothing there is written over), or an image
// is missing; IoError when a file cannot be written.
int64_t exportClassFolders(const std::string& folder, const std::map<std::string, ImageLabel>& labels,
                           const std::string& out);
int64_t exportYolo(const std::string& folder, const std::map<std::string, ImageBoxes>& images,
                   const std::vector<BoxCategory>& categories, const std::string& out);
int64_t exportVoc(const std::string& folder, const std::map<std::string, ImageBoxes>& images,
                  const std::vector<BoxCategory>& categories, const std::string& out);

}  // namespace studio
