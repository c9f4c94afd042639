#pragma once
// Datasets behind one interface (after flashlight's fl::Dataset and
// PyTorch's torch::data::datasets): a size, a gather of examples by position,
// and the whole set at once for device-resident training. The loader and the
// evaluator see only this, whatever the format.
//  - ExampleSet: rows of a pool tensor (uint8 images [N, C, H, W] or float
//    features [N, F]), possibly a view of a memory-mapped cache file, picked
//    by a list of rows, with their labels: a split of a format's examples.
//  - TensorSet: examples held as tensors, on any device (the device-resident
//    copy of a split).
// Thread: immutable after construction; gather may run on loader workers.

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

namespace studio {

struct Examples {
  torch::Tensor x;  // uint8 [B, C, H, W] (images) or float32 [B, F] (tables)
  torch::Tensor y;  // int64 [B] (classes) or float32 [B, T] (a regression's targets)
  int64_t size() const { return y.defined() ? y.size(0) : 0; }
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Examples at positions idx (int64, on device()).
  virtual Examples gather(const torch::Tensor& idx) const = 0;
  // Positions [start, end).
  virtual Examples slice(int64_t start, int64_t end) const = 0;
  // Every example, as tensors on device().
  virtual Examples all() const = 0;
  virtual torch::Device device() const = 0;
};

class ExampleSet : public Dataset {
 public:
  // pool: the format's examples; rows: which of them, in order; labels: theirs.
  ExampleSet(torch::Tensor pool, std::vector<int64_t> rows, std::vector<int64_t> labels);
  // targets: a row per example (float32 [rows, T]).
  ExampleSet(torch::Tensor pool, std::vector<int64_t> rows, torch::Tensor targets);
  int64_t size() const override { return m_rows.size(0); }
  Examples gather(const torch::Tensor& idx) const override;
  Examples slice(int64_t start, int64_t end) const override;
  Examples all() const override { return slice(0, size()); }
  torch::Device device() const override { return m_pool.device(); }
  // Bytes all() would hold.
  int64_t bytes() const;

 private:
  torch::Tensor m_pool, m_rows, m_labels;
};

class TensorSet : public Dataset {
 public:
  explicit TensorSet(Examples e) : m_e(std::move(e)) {}
  int64_t size() const override { return m_e.size(); }
  Examples gather(const torch::Tensor& idx) const override {
    return {m_e.x.index_select(0, idx), m_e.y.index_select(0, idx)};
  }
  Examples slice(int64_t start, int64_t end) const override {
    return {m_e.x.slice(0, start, end), m_e.y.slice(0, start, end)};
  }
  Examples all() const override { return m_e; }
  torch::Device device() const override { return m_e.y.device(); }

 private:
  Examples m_e;
};

// The same examples as tensors on `device`; `set` itself where it is there
// already (on the CPU a copy would only double the memory the data takes).
std::shared_ptr<Dataset> onDevice(std::shared_ptr<Dataset> set, const torch::Device& device);

}  // namespace studio
