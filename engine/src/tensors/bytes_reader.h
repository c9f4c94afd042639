#pragma once
// Bytes in memory as LibTorch's zip reader's input
// (caffe2::serialize::PyTorchStreamReader), for archives read whole:
// checkpoints (tensors/tensor_archive.cpp) and weights (tensors/state_dict_pickle.cpp).
// The bytes must outlive the reader; hand it over as a shared_ptr that does
// not delete it.
// Thread: any.

#include <algorithm>
#include <cstring>
#include <string>

#include <caffe2/serialize/read_adapter_interface.h>

namespace studio {

class BytesReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesReader(const std::string& bytes) : m_bytes(bytes) {}
  size_t size() const override { return m_bytes.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    if (pos >= m_bytes.size()) return 0;
    n = std::min<size_t>(n, m_bytes.size() - pos);
    std::memcpy(buf, m_bytes.data() + pos, n);
    return n;
  }

 private:
  const std::string& m_bytes;
};

}  // namespace studio
