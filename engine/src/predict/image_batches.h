#pragma once
// Image files decoded and resized into uint8 batches [B, C, H, W] by worker
// threads, in order, a few batches ahead of the consumer (pinned buffers when
// the batches go to a GPU). Nothing is cached: `predict` sees each file once.
// Thread: the consumer's methods on one thread; the workers are internal.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/types.h>

namespace studio {

struct ImageBatchOptions {
  int64_t channels = 1, height = 28, width = 28;
  bool cover = false;  // aspect kept, centre-cropped (data/decoded_images.h)
  int64_t batchSize = 256;
  int workers = 0;   // 0: one per core
  int prefetch = 3;  // batches decoded ahead
  bool pinned = false;
  // An image not larger than this in both sides is refused (five-crop); 0: any.
  int64_t largerThanHeight = 0, largerThanWidth = 0;
};

class ImageBatches {
 public:
  ImageBatches(std::vector<std::string> files, const ImageBatchOptions& options);
  ~ImageBatches();  // stops and joins the workers
  ImageBatches(const ImageBatches&) = delete;
  ImageBatches& operator=(const ImageBatches&) = delete;

  int64_t batches() const { return m_batches; }
  int64_t batchBegin(int64_t batch) const { return batch * m_options.batchSize; }
  // Waits for batch `b` (in order: 0, 1, ...): its pixels (rows of files that
  // could not be read are zero) and, per row, "" or the reason. The tensor's
  // buffer is reused once release(b) is called.
  torch::Tensor wait(int64_t b, std::vector<std::string>& errors);
  void release(int64_t b);

 private:
  struct Slot {
    int64_t batch = -1;  // the batch it holds or is decoding
    bool ready = false;
    int64_t done = 0;  // files of the batch decoded so far
    torch::Tensor pixels;
    std::vector<std::string> errors;
  };
  void work();

  std::vector<std::string> m_files;
  ImageBatchOptions m_options;
  int64_t m_batches = 0;
  std::vector<Slot> m_slots;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int64_t m_nextToDecode = 0, m_released = 0;  // batches below m_released are done with
  bool m_stop = false;
  std::vector<std::thread> m_workers;
};

}  // namespace studio
