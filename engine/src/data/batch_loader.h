#pragma once
// Turns an ImageSet into shuffled, normalised, optionally augmented batches
// on the training device.
//
// Two modes:
//  - device-resident: the uint8 images live on the device; batches are
//    gathered and transformed there (the fastest way to train small data);
//  - workers: background threads gather and transform batches on the host
//    into pinned buffers, a bounded queue per worker holds `prefetch` batches,
//    and the engine thread copies them to the device without blocking.
// Both produce exactly the same batches: the order is a function of
// (seed, epoch) and each batch's augmentation of (seed, epoch, batch index),
// so a resumed run sees the same data as an uninterrupted one.
//
// Thread: all public methods on the engine thread; workers are internal.

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include <torch/types.h>

#include "data/image_dataset.h"

namespace studio {

struct LoaderOptions {
  int64_t batchSize = 128;
  bool shuffle = true;
  bool augmentFlip = false;
  int augmentCrop = 0;
  double mean = 0, std = 1;
  uint64_t seed = 1;
  bool deviceResident = true;
  int workers = 2;
  int prefetch = 4;
  bool pinMemory = true;
  bool channelsLast = false;
};

struct Batch {
  torch::Tensor x;  // float32 [B, C, H, W] on the device
  torch::Tensor y;  // int64 [B] on the device
  int64_t index = 0;
  int64_t size() const { return y.size(0); }
};

class BatchLoader {
 public:
  BatchLoader(const ImageSet& set, const LoaderOptions& options, torch::Device device);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  int64_t batchesPerEpoch() const;
  int64_t examples() const { return m_set.size(); }
  // Starts an epoch at batch `first` (resume skips what was already seen).
  void startEpoch(int64_t epoch, int64_t first = 0);
  // The next batch of the epoch; false at its end. Rethrows worker errors.
  bool next(Batch& out);

 private:
  struct Worker;
  struct HostBatch;
  torch::Tensor epochOrder(int64_t epoch) const;
  HostBatch makeHostBatch(int64_t index) const;
  void stopWorkers();

  ImageSet m_set;          // host copy (workers) or device copy (device-resident)
  LoaderOptions m_options;
  torch::Device m_device;
  torch::Tensor m_order;   // this epoch's permutation, on the set's device
  int64_t m_epoch = 0;
  int64_t m_nextBatch = 0;
  int64_t m_firstBatch = 0;
  std::vector<std::unique_ptr<Worker>> m_workers;
};

// Gathers images[idx] and applies normalisation and augmentation; shared by
// both modes and by evaluation.
torch::Tensor transformBatch(const torch::Tensor& imagesU8, const LoaderOptions& options,
                             uint64_t augmentSeed, bool augment);

}  // namespace studio
