#pragma once
// Tensors and plain values (dicts, lists, strings, numbers) in torch.save's
// zip format, read back as data only.
//
// Writing: LibTorch's pickler without type tags, so Python's
// torch.load(path) reads the file with its default weights_only=True, plus
// one record, studio_checksum.json, with the CRC-32 of every other record.
// Reading: LibTorch's unpickler with no type resolver, so a global other than
// the tensor rebuilders (a TorchScript class, os.system, ...) is an error and
// nothing in the file runs. An archive that carries TorchScript code
// (torch.jit.save, or checkpoints of Training Studio 0.1) is refused before
// anything is unpickled, and a damaged one fails its checksum.
// Thread: free functions, any thread.

#include <string>

#include <ATen/core/ivalue.h>

namespace studio {

// `value` as torch.save writes it, with the checksum record.
std::string saveTensorArchive(const c10::IValue& value);

// Reads an archive written by saveTensorArchive. `path` and `what` ("checkpoint")
// only name the file in messages. Throws CheckpointError when the bytes are
// not such an archive, carry code, fail the checksum or hold anything but
// tensors and plain values. Tensors come back on the CPU.
c10::IValue loadTensorArchive(const std::string& bytes, const std::string& path, const std::string& what);

// Reading a dict of plain values with messages that name the file and key.
class ArchiveDict {
 public:
  ArchiveDict(const c10::IValue& value, std::string path, std::string where);
  bool has(const std::string& key) const;
  const c10::IValue& at(const std::string& key) const;
  ArchiveDict dict(const std::string& key) const;
  at::Tensor tensor(const std::string& key) const;
  std::vector<at::Tensor> tensors(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  std::string text(const std::string& key) const;
  // Every key, in the file's order (a CheckpointError when one is not a string).
  std::vector<std::string> keys() const;
  // Every key with a tensor value, in the file's order.
  std::vector<std::pair<std::string, at::Tensor>> namedTensors() const;

 private:
  [[noreturn]] void wrongType(const std::string& key, const char* wanted) const;
  c10::impl::GenericDict m_dict;
  std::string m_path, m_where;
};

}  // namespace studio
