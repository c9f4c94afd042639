#pragma once
// Turns a Dataset into shuffled, normalised, optionally augmented batches
// on the training device.
//
// Two modes:
//  - device-resident: the examples live on the device; batches are gathered
//    and transformed there (the fastest way to train data that fits);
//  - workers: background threads gather (from memory or the memory-mapped
//    cache) and transform batches on the host into pinned buffers, a bounded
//    queue per worker holds `prefetch` batches, and the engine thread copies
//    them to the device without blocking.
// Both produce exactly the same batches: the order (a permutation, or the
// balanced sampler's draws) is a function of (seed, epoch) and each batch's augmentation of (seed, epoch, batch index),
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
#include <nlohmann/json_fwd.hpp>

#include "data/augment.h"
#include "data/auto_augment.h"
#include "data/dataset.h"
#include "data/decoded_images.h"  // centreCrop

namespace studio {

// Normalisation: images (uint8) become (x / 255 - mean[c]) / std[c] per
// channel; tables (float) (x - mean[f]) / std[f] per feature. Both tensors
// are kept on the CPU (workers) and on the training device.
struct Normalization {
  bool image = true;
  torch::Tensor meanCpu, stdCpu, meanDevice, stdDevice;  // shaped to broadcast over a batch
  static Normalization make(bool image, const std::vector<double>& mean, const std::vector<double>& std,
                            const torch::Device& device);
  // As a run recorded it (run_info's "normalization": {"mean": [...],
  // "std": [...]}, `width` values each: channels or features); none (0 and
  // 1) when it holds no such lists (data.normalize off).
  static Normalization recorded(const nlohmann::json& recorded, bool image, int64_t width, const torch::Device& device);
};

struct LoaderOptions {
  int64_t batchSize = 128;
  bool shuffle = true;
  bool augmentFlip = false;
  int augmentCrop = 0;
  PhotoAugment photo;  // torchvision's photo augmentations (data/augment.h)
  AutoAugment policy;  // RandAugment or TrivialAugmentWide (data/auto_augment.h)
  BatchMix mix;        // MixUp / CutMix of training batches: float32 [B, classes] targets
  Normalization norm;
  // Images stored larger than the model's input (data.stored_size): the
  // input's size, cut from the centre (evaluation, and training without a
  // random resized crop) or by the random resized crop. 0: as stored.
  int64_t cropHeight = 0, cropWidth = 0;
  uint64_t seed = 1;
  bool deviceResident = true;
  int workers = 2;
  int prefetch = 4;
  bool pinMemory = true;
  bool channelsLast = false;
  // The batch as the pool holds it (uint8), neither augmented nor
  // normalised: a task that augments and normalises its images itself,
  // with their masks (task.kind segmentation, data/mask_data.h).
  bool keepBytes = false;
  // Data parallelism: batch i of an epoch is rank r's share of the global
  // batch i (batchSize x shardCount examples of the epoch's order): its
  // examples r, r + shardCount, ... Every example once per epoch, split
  // between the ranks; the global batches are those of one process with a
  // batch of batchSize x shardCount.
  int shardRank = 0;
  int shardCount = 1;
  // data.sampler balanced: each example's weight (float64 [N], on the CPU);
  // an epoch is then N draws with replacement in proportion to them
  // (torch.utils.data.WeightedRandomSampler), seeded by (seed, epoch).
  // Undefined: a permutation of the examples.
  torch::Tensor sampleWeights;
};

struct Batch {
  torch::Tensor x;  // float32 [B, C, H, W] on the device
  torch::Tensor y;  // int64 [B] on the device
  int64_t index = 0;
  int64_t globalSize = 0;  // the examples of the global batch (all ranks' shares)
  int64_t size() const { return y.size(0); }
};

class BatchLoader {
 public:
  BatchLoader(std::shared_ptr<Dataset> set, const LoaderOptions& options, torch::Device device);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  int64_t batchesPerEpoch() const;
  int64_t examples() const { return m_set->size(); }
  // Starts an epoch at batch `first` (resume skips what was already seen).
  void startEpoch(int64_t epoch, int64_t first = 0);
  // The next batch of the epoch; false at its end. Rethrows worker errors.
  bool next(Batch& out);

 private:
  struct Worker;
  struct HostBatch;
  torch::Tensor epochOrder(int64_t epoch) const;
  int64_t globalBatch() const { return m_options.batchSize * m_options.shardCount; }
  int64_t globalSize(int64_t index) const;
  HostBatch makeHostBatch(int64_t index) const;
  void stopWorkers();

  std::shared_ptr<Dataset> m_set;  // host (workers) or device copy (device-resident)
  LoaderOptions m_options;
  torch::Device m_device;
  torch::Tensor m_order;  // this epoch's permutation, on the set's device
  int64_t m_epoch = 0;
  int64_t m_nextBatch = 0;
  int64_t m_firstBatch = 0;
  std::vector<std::unique_ptr<Worker>> m_workers;
};

// Applies normalisation and (images, training) augmentation to a gathered
// batch; shared by both modes and by evaluation.
torch::Tensor transformBatch(const torch::Tensor& x, const LoaderOptions& options, uint64_t augmentSeed, bool augment);

}  // namespace studio
