#include "data/image_dataset.h"

#include <ATen/CPUGeneratorImpl.h>

#include "data/idx_file.h"

namespace studio {

ImageSet loadImageSet(const std::string& imagesPath, const std::string& labelsPath) {
  IdxArray images = readIdxFile(imagesPath, 3);
  IdxArray labels = readIdxFile(labelsPath, 1);
  if (images.dims[0] != labels.dims[0])
    throw DataError("data files disagree: " + imagesPath + " holds " + std::to_string(images.dims[0]) +
                    " images but " + labelsPath + " holds " + std::to_string(labels.dims[0]) + " labels");
  for (uint8_t l : labels.data)
    if (l > 9) throw DataError("labels file " + labelsPath + " holds label " + std::to_string(l) +
                               " (expected 0..9)");
  ImageSet s;
  const int64_t n = images.dims[0];
  s.images = torch::from_blob(images.data.data(), {n, 1, images.dims[1], images.dims[2]}, torch::kUInt8).clone();
  s.labels = torch::from_blob(labels.data.data(), {n}, torch::kUInt8).to(torch::kInt64);
  return s;
}

DataSplits loadDataSplits(const DataConfig& config, uint64_t seed) {
  DataSplits d;
  // One statement each: the first missing file is the one reported.
  const std::string trainImages = findDataFile(config.root, "train-images-idx3-ubyte");
  const std::string trainLabels = findDataFile(config.root, "train-labels-idx1-ubyte");
  const std::string testImages = findDataFile(config.root, "t10k-images-idx3-ubyte");
  const std::string testLabels = findDataFile(config.root, "t10k-labels-idx1-ubyte");
  ImageSet train = loadImageSet(trainImages, trainLabels);
  d.test = loadImageSet(testImages, testLabels);
  if (config.train_limit > 0 && config.train_limit < train.size()) {
    train.images = train.images.slice(0, 0, config.train_limit);
    train.labels = train.labels.slice(0, 0, config.train_limit);
  }
  if (config.test_limit > 0 && config.test_limit < d.test.size()) {
    d.test.images = d.test.images.slice(0, 0, config.test_limit);
    d.test.labels = d.test.labels.slice(0, 0, config.test_limit);
  }
  const int64_t nVal = heldOutCount(config.val_fraction, train.size());
  if (nVal > 0) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x5eed5eedULL);
    torch::Tensor perm = torch::randperm(train.size(), gen, torch::kInt64);
    torch::Tensor valIdx = std::get<0>(perm.slice(0, 0, nVal).sort());
    torch::Tensor trainIdx = std::get<0>(perm.slice(0, nVal).sort());
    d.val = {train.images.index_select(0, valIdx), train.labels.index_select(0, valIdx)};
    d.train = {train.images.index_select(0, trainIdx), train.labels.index_select(0, trainIdx)};
  } else {
    d.train = train;
  }
  if (d.train.size() == 0) throw DataError("no training images left after data.val_fraction");
  torch::Tensor px = d.train.images.to(torch::kFloat64).div_(255.0);
  d.mean = px.mean().item<double>();
  d.std = px.std().item<double>();
  return d;
}

}  // namespace studio
