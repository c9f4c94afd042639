#pragma once
// task.kind detection's data through the loaders every task uses: the
// images of the plan (each at its own size, shrunk only where its longer side
// passes the detector's max_size) top-left in one uint8 pool
// [N, 3, Hmax, Wmax], and each image's boxes packed into a float32 row of
// the targets, so that shuffling, sharding, device residency, resuming and
// micro-batches treat detection as they treat any task:
//   [item, height, width, scale, then maxBoxes x (label, x1, y1, x2, y2)]
// item: the plan's (its annotations' image); height x width: the image in
// the pool; scale: pool pixels per original pixel; label: 1 .. classes (0
// is the background, as torchvision's detectors count), -1 in unused slots.
// Crowd boxes are left out of the rows (training ignores them, as
// torchvision's references do); evaluation reads the plan's boxes.
// Thread: engine thread.

#include <cstdint>
#include <vector>

#include "data/data_loading.h"
#include "studio/data_plan.h"
#include "studio/train_config.h"
#include "torch_pch.h"

namespace studio::detection {

inline constexpr int64_t kPackedHeader = 4;
inline constexpr int64_t kPackedBox = 5;

// Where an image of height x width goes in the pool: at its own size, or
// shrunk so that its longer side is maxSize (0: never shrunk), its shorter
// side not below minShorter (SSD's fixed size stretches the shorter side);
// scale is pool pixels per original pixel. Predictions place new images the
// same way (poolPlacement: the model's transform's sizes).
struct Placement {
  int64_t height = 0, width = 0;
  double scale = 1;
};
Placement placeImage(int64_t height, int64_t width, int64_t maxSize, int64_t minShorter = 0);
struct RcnnTransformOptions;
Placement poolPlacement(int64_t height, int64_t width, const RcnnTransformOptions& transform);

// The splits of a detection plan; the boxes per class of each split in
// trainCounts, valCounts and testCounts; images shrunk to the detector's
// max_size (model.detector.max_size, else the model's). Throws
// DataError naming a file that cannot be read, or whose size is not the
// annotations'.
DataSplits loadDetectionData(const TrainConfig& config, const DataPlan& plan, const LoadProgress& progress);

struct PackedImage {
  int64_t item = 0;
  double scale = 1;
  torch::Tensor image;   // 3 x h x w, a view of the batch
  torch::Tensor boxes;   // K x 4 (x1, y1, x2, y2), float32, in the image's pixels
  torch::Tensor labels;  // K, int64, 1 .. classes
};

// A batch's images and boxes from its pool rows and packed targets (on
// their device; reads the targets' header to the host).
std::vector<PackedImage> unpackBatch(const torch::Tensor& x, const torch::Tensor& y);

}  // namespace studio::detection
