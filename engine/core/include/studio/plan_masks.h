#pragma once
// A segmentation plan's masks, whatever their source (DataPlan::maskFiles'
// PNG files, or DataPlan::instanceMasks' COCO instances painted as
// torchvision's references paint them): one function for the loader, the
// Data tab and `summary`. Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "studio/data_plan.h"
#include "studio/mask_file.h"

namespace studio {

// The item's mask (a class per pixel, or the ignore index). Throws DataError
// naming the file that cannot be read.
Mask itemMask(const DataPlan& plan, int64_t item);
// Where the item's mask comes from, for messages: its PNG file, or
// "instances.json's image 17 (a.jpg)".
std::string itemMaskSource(const DataPlan& plan, int64_t item);

// The pixels of each class in the items' masks (the ignored value and
// values outside the classes left out); a mask that cannot be read counts
// nothing (the run names it).
std::vector<int64_t> maskPixelsPerClass(const DataPlan& plan, const std::vector<int64_t>& items);

}  // namespace studio
