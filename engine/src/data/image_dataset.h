#pragma once
// Image classification data held in memory as uint8, split into train,
// validation and test sets.
// Thread: loadDataSplits on the engine thread; the result is read-only after.

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "studio/train_config.h"

namespace studio {

struct ImageSet {
  torch::Tensor images;  // uint8 [N, C, H, W]
  torch::Tensor labels;  // int64 [N]
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct DataSplits {
  ImageSet train, val, test;
  double mean = 0, std = 1;  // of the training pixels in [0, 1]
  int64_t numClasses = 10;
};

// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] under config.root.
// Throws DataError naming the file for missing, malformed or mismatched files.
DataSplits loadDataSplits(const DataConfig& config, uint64_t seed);

// One split from an images and a labels file (counts must match).
ImageSet loadImageSet(const std::string& imagesPath, const std::string& labelsPath);

}  // namespace studio
