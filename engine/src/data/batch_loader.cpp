#include "data/batch_loader.h"

#include <nlohmann/json.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <readerwriterqueue/readerwritercircularbuffer.h>

#include <chrono>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "studio/data_split.h"
#include "studio/errors.h"

namespace studio {
namespace {

// Distinct (seed, epoch, batch) give unrelated streams.
uint64_t mix(uint64_t a, uint64_t b) { return mixSeed(a, b); }

}  // namespace

static torch::Tensor augmentBatch(torch::Tensor x, const LoaderOptions& o, at::Generator& gen);

Normalization Normalization::make(bool image, const std::vector<double>& mean, const std::vector<double>& std,
                                  const torch::Device& device) {
  Normalization n;
  n.image = image;
  const auto k = static_cast<int64_t>(mean.size());
  const std::vector<int64_t> shape = image ? std::vector<int64_t>{1, k, 1, 1} : std::vector<int64_t>{1, k};
  n.meanCpu = torch::tensor(mean, torch::kFloat64).to(torch::kFloat32).view(shape);
  n.stdCpu = torch::tensor(std, torch::kFloat64).to(torch::kFloat32).view(shape);
  n.meanDevice = n.meanCpu.to(device);
  n.stdDevice = n.stdCpu.to(device);
  return n;
}

Normalization Normalization::recorded(const nlohmann::json& recorded, bool image, int64_t width,
                                      const torch::Device& device) {
  const auto n = static_cast<size_t>(width);
  const std::string where = "settings.json's run_info.normalization";
  std::vector<double> means, stds;
  try {
    means = recorded.value("mean", std::vector<double>{});
    stds = recorded.value("std", std::vector<double>{});
  } catch (const nlohmann::json::exception&) {
    throw InputError(where + " must hold lists of numbers \"mean\" and \"std\" (the file was edited): restore it");
  }
  if (means.size() != n || stds.size() != n) means.assign(n, 0.0), stds.assign(n, 1.0);
  // The run recorded finite means and stds above 0 (a constant channel's is
  // 1): anything else was edited, and would turn every input into NaN or
  // infinity that the model, not the file, would be blamed for.
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(means[i]) || !std::isfinite(stds[i]) || !(stds[i] > 0))
      throw InputError(where + " has mean " + std::to_string(means[i]) + " and std " + std::to_string(stds[i]) +
                       " at index " + std::to_string(i) +
                       ": each mean must be a finite number and each std one above 0 (the file was edited); "
                       "restore it");
  return make(image, means, stds, device);
}

torch::Tensor transformBatch(const torch::Tensor& in, const LoaderOptions& o, uint64_t augmentSeed, bool augment) {
  if (o.keepBytes) return in;
  const Normalization& n = o.norm;
  const bool onCpu = !in.is_cuda();
  const torch::Tensor& mean = onCpu ? n.meanCpu : n.meanDevice;
  const torch::Tensor& std = onCpu ? n.stdCpu : n.stdDevice;
  if (!n.image) return (in.to(torch::kFloat32) - mean).div_(std);
  // A stored image larger than the input: its centre (torchvision's
  // CenterCrop offsets), cut before any arithmetic, unless the random
  // resized crop takes its own part of it.
  const bool larger = o.cropHeight > 0 && (in.size(2) != o.cropHeight || in.size(3) != o.cropWidth);
  const bool resizedCrop = augment && o.photo.resizedCrop;
  if (!augment) {
    const torch::Tensor x = larger ? centreCrop(in, o.cropHeight, o.cropWidth) : in;
    return x.to(torch::kFloat32).div_(255.0).sub_(mean).div_(std);
  }
  // The random choices are drawn on the CPU from a per-batch generator, so
  // both loader modes and any device give identical batches.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(augmentSeed);
  // RandomResizedCrop first, as torchvision's recipes place it, on the 8-bit
  // pixels (fewer to convert: the crop's, not the stored image's).
  PhotoAugment photo = o.photo;
  if (larger) std::tie(photo.outHeight, photo.outWidth) = std::pair(o.cropHeight, o.cropWidth);
  torch::Tensor x = resizedCrop ? randomResizedCrop(in, photo, gen)
                    : larger    ? centreCrop(in, o.cropHeight, o.cropWidth)
                                : in;
  x = x.to(torch::kFloat32).div_(255.0);
  photo.resizedCrop = false;
  // Augmentation before normalisation: crops pad with black (0), which
  // normalisation then maps per channel; random erasing after it (value 0,
  // the mean), as torchvision's recipes place it.
  if (o.augmentFlip || o.augmentCrop > 0) x = augmentBatch(x, o, gen);
  if (o.policy.on()) x = autoAugmentBatch(x, o.policy, gen);
  if (photo.beforeNormalization()) x = augmentPhotos(x, photo, gen);
  x = x.sub_(mean).div_(std);
  return o.photo.erasing > 0 ? eraseRandomly(x, o.photo, gen) : x;
}

static torch::Tensor augmentBatch(torch::Tensor x, const LoaderOptions& o, at::Generator& gen) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  // Through pinned memory, so the copy to a GPU is asynchronous: a copy from
  // pageable memory would synchronise the host with the device every step.
  auto toDevice = [&](const torch::Tensor& t) {
    return x.is_cuda() ? t.pin_memory().to(x.device(), /*non_blocking=*/true) : t;
  };
  if (o.augmentCrop > 0) {
    const int64_t p = o.augmentCrop;
    torch::Tensor dy = toDevice(torch::randint(0, 2 * p + 1, {b}, gen, torch::kInt64));
    torch::Tensor dx = toDevice(torch::randint(0, 2 * p + 1, {b}, gen, torch::kInt64));
    torch::Tensor padded = torch::constant_pad_nd(x, {p, p, p, p}, 0.0);
    auto opts = torch::TensorOptions().dtype(torch::kInt64).device(x.device());
    torch::Tensor rows = dy.unsqueeze(1) + torch::arange(h, opts).unsqueeze(0);  // [B, H]
    torch::Tensor cols = dx.unsqueeze(1) + torch::arange(w, opts).unsqueeze(0);  // [B, W]
    torch::Tensor bi = torch::arange(b, opts).view({b, 1, 1});
    // padded: [B, C, H+2p, W+2p] -> [B, H, W, C] by advanced indexing, then back.
    torch::Tensor perm = padded.permute({0, 2, 3, 1});
    x = perm.index({bi, rows.unsqueeze(2), cols.unsqueeze(1)}).permute({0, 3, 1, 2}).contiguous();
  }
  if (o.augmentFlip) {
    // The flipped images alone, written back into the batch (its own).
    const torch::Tensor flip = torch::rand({b}, gen).lt(0.5).nonzero().view({-1});
    if (flip.numel() > 0) {
      const torch::Tensor idx = toDevice(flip);
      x.index_copy_(0, idx, x.index_select(0, idx).flip({3}));
    }
  }
  return x;
}

struct BatchLoader::HostBatch {
  torch::Tensor x, y;
  int64_t index = -1;
  std::exception_ptr error;
};

struct BatchLoader::Worker {
  moodycamel::BlockingReaderWriterCircularBuffer<HostBatch> queue;
  std::atomic<bool> stop{false};
  std::thread thread;
  explicit Worker(size_t capacity) : queue(capacity) {}
};

BatchLoader::BatchLoader(std::shared_ptr<Dataset> set, const LoaderOptions& options, torch::Device device)
    : m_set(options.deviceResident ? onDevice(std::move(set), device) : std::move(set)),
      m_options(options),
      m_device(device) {}

BatchLoader::~BatchLoader() { stopWorkers(); }

int64_t BatchLoader::batchesPerEpoch() const { return (m_set->size() + globalBatch() - 1) / globalBatch(); }

int64_t BatchLoader::globalSize(int64_t index) const {
  return std::min((index + 1) * globalBatch(), m_set->size()) - index * globalBatch();
}

torch::Tensor BatchLoader::epochOrder(int64_t epoch) const {
  if (!m_options.shuffle) return torch::arange(m_set->size(), torch::kInt64);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(mix(m_options.seed, static_cast<uint64_t>(epoch)));
  if (m_options.sampleWeights.defined() && m_set->size() > 0)
    return torch::multinomial(m_options.sampleWeights, m_set->size(), /*replacement=*/true, gen);
  return torch::randperm(m_set->size(), gen, torch::kInt64);
}

BatchLoader::HostBatch BatchLoader::makeHostBatch(int64_t index) const {
  HostBatch hb;
  hb.index = index;
  const int64_t start = index * globalBatch();
  const int64_t end = std::min(start + globalBatch(), m_set->size());
  torch::Tensor idx = m_options.shardCount == 1
                          ? m_order.slice(0, start, end)
                          : m_order.slice(0, std::min(start + m_options.shardRank, end), end, m_options.shardCount);
  const uint64_t seed = mix(mix(m_options.seed, static_cast<uint64_t>(m_epoch)), static_cast<uint64_t>(index));
  Examples e = m_set->gather(idx);
  hb.x = transformBatch(e.x, m_options, seed, m_options.shuffle);
  hb.y = e.y;
  if (m_options.mix.on() && m_options.shuffle) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(mix(seed, 0x6d6978));  // "mix": its own stream
    std::tie(hb.x, hb.y) = mixBatch(hb.x, hb.y, m_options.mix, gen);
  }
  if (m_options.channelsLast && hb.x.dim() == 4) hb.x = hb.x.contiguous(torch::MemoryFormat::ChannelsLast);
  return hb;
}

void BatchLoader::stopWorkers() {
  for (auto& w : m_workers) w->stop = true;
  for (auto& w : m_workers) {
    HostBatch drop;
    while (w->queue.try_dequeue(drop)) {
    }
    if (w->thread.joinable()) w->thread.join();
  }
  m_workers.clear();
}

void BatchLoader::startEpoch(int64_t epoch, int64_t first) {
  stopWorkers();
  m_epoch = epoch;
  m_nextBatch = first;
  m_firstBatch = first;
  m_order = epochOrder(epoch).to(m_set->device());
  if (m_options.deviceResident || m_options.workers <= 0) return;
  const int n = m_options.workers;
  const bool pin = m_options.pinMemory && m_device.is_cuda();
  for (int w = 0; w < n; ++w) {
    auto worker = std::make_unique<Worker>(static_cast<size_t>(m_options.prefetch));
    Worker* self = worker.get();
    // Worker w makes batches first+w, first+w+n, ... in order, so the engine
    // reads batch i from worker (i - first) % n and the order never depends
    // on thread timing.
    worker->thread = std::thread([this, self, w, n, first, pin] {
      torch::NoGradGuard guard;  // not InferenceMode: inputs are saved for backward
      for (int64_t i = first + w; i < batchesPerEpoch() && !self->stop; i += n) {
        HostBatch hb;
        try {
          hb = makeHostBatch(i);
          if (pin) {
            hb.x = hb.x.pin_memory();
            hb.y = hb.y.pin_memory();
          }
        } catch (...) {
          hb.index = i;
          hb.error = std::current_exception();
        }
        const bool failed = static_cast<bool>(hb.error);
        while (!self->stop && !self->queue.wait_enqueue_timed(std::move(hb), std::chrono::milliseconds(50))) {
        }
        if (failed) return;
      }
    });
    m_workers.push_back(std::move(worker));
  }
}

bool BatchLoader::next(Batch& out) {
  if (m_nextBatch >= batchesPerEpoch()) return false;
  const int64_t index = m_nextBatch++;
  HostBatch hb;
  if (m_workers.empty()) {
    torch::NoGradGuard guard;  // not InferenceMode: inputs are saved for backward
    hb = makeHostBatch(index);
  } else {
    const int64_t n = static_cast<int64_t>(m_workers.size());
    Worker& w = *m_workers[static_cast<size_t>((index - m_firstBatch) % n)];
    w.queue.wait_dequeue(hb);
    if (hb.error) std::rethrow_exception(hb.error);
  }
  // Pinned sources make these copies asynchronous; device-resident batches
  // are already there.
  out.x = hb.x.to(m_device, /*non_blocking=*/true);
  out.y = hb.y.to(m_device, /*non_blocking=*/true);
  out.index = index;
  out.globalSize = globalSize(index);
  return true;
}

}  // namespace studio
