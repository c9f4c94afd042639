#pragma once
// task.kind segmentation's data through the loaders every task uses (as
// data/box_data.h does for detection): each image (shrunk, with its mask,
// where its shorter side passes twice model.segmenter.base_size, the
// largest that training resizes to) top-left in one uint8 pool
// [N, 4, Hmax, Wmax]: channels 0-2 the image, channel 3 its mask (a class
// per pixel, or data.ignore_index). The targets are a float32 header per
// image, [item, height, width, scale] (item: the plan's; height x width:
// the image in the pool; scale: pool pixels per original pixel). The loader
// hands the pool's bytes over unchanged (LoaderOptions::keepBytes): the
// task resizes, flips and crops image and mask together, then normalises.
// Thread: engine thread.

#include <cstdint>
#include <vector>

#include "data/data_loading.h"
#include "studio/data_plan.h"
#include "studio/train_config.h"
#include "torch_pch.h"

namespace studio {

inline constexpr int64_t kMaskedHeader = 4;

// The splits of a segmentation plan; each split's pixels per class in
// trainCounts, valCounts and testCounts. Throws DataError naming an image
// or mask that cannot be read, a mask whose size is not its image's, or a
// mask value that is no class and not data.ignore_index.
DataSplits loadSegmentationData(const TrainConfig& config, const DataPlan& plan, const LoadProgress& progress);

struct MaskedRow {
  int64_t item = 0;
  double scale = 1;
  torch::Tensor image;  // uint8 [3, h, w], a view of the batch
  torch::Tensor mask;   // uint8 [h, w], a view of the batch
};

// A batch's images and masks from its pool rows and headers (reads the
// headers to the host).
std::vector<MaskedRow> unpackMaskedBatch(const torch::Tensor& x, const torch::Tensor& y);

}  // namespace studio
