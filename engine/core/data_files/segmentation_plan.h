#pragma once
// task.kind segmentation's data plan (segmentation_plan.cpp). Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <vector>

#include "studio/data_plan.h"
#include "studio/train_config.h"

namespace studio {

// Images and their masks: data.root's images with data.annotations' PNG
// masks or a COCO instances JSON's segmentations (the test images held out
// by data.test_fraction), or Pascal VOC's
// folder in data.root (its train list trains, its val list tests); the
// classes from data.class_names, a classes.txt beside the masks, or VOC's.
// Throws DataError naming the folder, list, file or setting that is wrong.
void planSegmentation(DataPlan& plan, const DataConfig& data, uint64_t seed);

}  // namespace studio
