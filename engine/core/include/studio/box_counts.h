#pragma once
// task.kind detection: the boxes per class of some of the annotations'
// images, crowds left out as training leaves them. The data plan's counts
// (describePlan) and the loaded splits' (detection_data.cpp) are both these.
// Torch-free. Thread: any.

#include <cstdint>
#include <vector>

#include "studio/box_annotations.h"

namespace studio {

// images: indices into a.images (each at most once); classes: a.categories' count.
std::vector<int64_t> boxesPerClass(const BoxAnnotations& a, const std::vector<int64_t>& images, int64_t classes);

}  // namespace studio
