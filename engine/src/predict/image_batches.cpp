#include "predict/image_batches.h"

#include <algorithm>
#include <cstring>

#include "data/decoded_images.h"
#include "studio/errors.h"

namespace studio {

ImageBatches::ImageBatches(std::vector<std::string> files, const ImageBatchOptions& options)
    : m_files(std::move(files)), m_options(options) {
  const auto n = static_cast<int64_t>(m_files.size());
  m_options.batchSize = std::max<int64_t>(1, m_options.batchSize);
  m_options.prefetch = std::max(1, m_options.prefetch);
  m_batches = (n + m_options.batchSize - 1) / m_options.batchSize;
  const int64_t rows = std::min(n, m_options.batchSize);
  m_slots.resize(static_cast<size_t>(std::min<int64_t>(m_options.prefetch, std::max<int64_t>(1, m_batches))));
  for (auto& s : m_slots)
    s.pixels = torch::empty({rows, m_options.channels, m_options.height, m_options.width},
                            torch::TensorOptions(torch::kUInt8).pinned_memory(m_options.pinned));
  int workers = m_options.workers > 0 ? m_options.workers : static_cast<int>(std::thread::hardware_concurrency());
  workers = static_cast<int>(std::clamp<int64_t>(workers, 1, std::max<int64_t>(1, n)));
  for (int t = 0; t < workers; ++t) m_workers.emplace_back([this] { work(); });
}

ImageBatches::~ImageBatches() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  for (auto& t : m_workers) t.join();
}

void ImageBatches::work() {
  c10::InferenceMode guard;
  const auto n = static_cast<int64_t>(m_files.size());
  const int64_t size = m_options.batchSize;
  const auto slots = static_cast<int64_t>(m_slots.size());
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [&] { return m_stop || m_nextToDecode >= n || m_nextToDecode / size < m_released + slots; });
    if (m_stop || m_nextToDecode >= n) return;
    const int64_t i = m_nextToDecode++, b = i / size;
    Slot& slot = m_slots[static_cast<size_t>(b % slots)];
    if (slot.batch != b) {  // the first file of the batch: the slot is free (batch b - slots was released)
      slot.batch = b;
      slot.ready = false;
      slot.errors.assign(static_cast<size_t>(std::min(size, n - b * size)), std::string());
    }
    const int64_t rowBytes = m_options.channels * m_options.height * m_options.width;
    uint8_t* row = slot.pixels.data_ptr<uint8_t>() + (i - b * size) * rowBytes;
    lock.unlock();
    std::string error;
    try {
      const std::string& file = m_files[static_cast<size_t>(i)];
      const auto [h, w] =
          decodeImageInto(file, m_options.channels, m_options.height, m_options.width, row, m_options.cover);
      if (h <= m_options.largerThanHeight && w <= m_options.largerThanWidth)
        throw DataError("image file " + file + " is " + std::to_string(h) + "x" + std::to_string(w) +
                        ", not larger than the model's input (" + std::to_string(m_options.largerThanHeight) + "x" +
                        std::to_string(m_options.largerThanWidth) +
                        "): five-crop needs larger images (--tta flip or none works on any)");
    } catch (const std::exception& e) {
      std::memset(row, 0, static_cast<size_t>(rowBytes));
      error = e.what();
      if (error.empty()) error = "cannot be read";
    }
    lock.lock();
    slot.errors[static_cast<size_t>(i - b * size)] = std::move(error);
    // The batch is complete when its last file is done and no file of it is
    // still being decoded: count what is left.
    if (++slot.done == static_cast<int64_t>(slot.errors.size())) {
      slot.ready = true;
      slot.done = 0;
      m_changed.notify_all();
    }
  }
}

torch::Tensor ImageBatches::wait(int64_t b, std::vector<std::string>& errors) {
  std::unique_lock<std::mutex> lock(m_mutex);
  Slot& slot = m_slots[static_cast<size_t>(b % static_cast<int64_t>(m_slots.size()))];
  m_changed.wait(lock, [&] { return slot.batch == b && slot.ready; });
  errors = slot.errors;
  return slot.pixels.narrow(0, 0, static_cast<int64_t>(slot.errors.size()));
}

void ImageBatches::release(int64_t b) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_released = std::max(m_released, b + 1);
  }
  m_changed.notify_all();
}

}  // namespace studio
