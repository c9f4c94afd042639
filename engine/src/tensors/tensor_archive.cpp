#include "tensors/tensor_archive.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "tensors/bytes_reader.h"

namespace studio {
namespace {

constexpr const char* kChecksumRecord = "studio_checksum.json";

uint32_t crc32Of(const void* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

// A record's local and central headers, its name and its alignment's
// padding: well over what PyTorchStreamWriter writes for one.
constexpr size_t kRecordOverhead = 512;

size_t manifestReserve(size_t tensors) { return (tensors + 8) * (kRecordOverhead + 64) + 4096; }

bool carriesCode(const std::string& record) {
  return record.rfind("code/", 0) == 0 || record == "constants.pkl" || record == "bytecode.pkl" ||
         (record.size() > 3 && record.compare(record.size() - 3, 3, ".py") == 0);
}

}  // namespace

std::string saveTensorArchive(const c10::IValue& value) {
  std::vector<char> pickled;
  // No type tags (torch.jit._pickle.restore_type_tag), which weights_only
  // loading refuses; no tensor table: tensors are written as storages, as
  // torch.save does.
  torch::jit::Pickler pickler([&](const char* buf, size_t n) { pickled.insert(pickled.end(), buf, buf + n); }, nullptr,
                              nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  // The checksums cover what carries content: the pickle and each tensor's
  // bytes, named as writeArchiveAndTensors names them ("data/<i>").
  nlohmann::json crcs = nlohmann::json::object();
  crcs["data.pkl"] = crc32Of(pickled.data(), pickled.size());
  const auto& tensors = pickler.tensorData();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto bytes = torch::jit::getWriteableTensorData(tensors[i]);
    crcs["data/" + std::to_string(i)] = crc32Of(bytes.data(), bytes.sizeInBytes());
  }
  // The archive's size known ahead (records aligned to 64 bytes, a header
  // each), so that it is assembled in one buffer: growing it by doubling
  // copied a ResNet-18 fine-tune's 134 MB checkpoint about twice more and
  // touched as many new pages.
  size_t size = pickled.size() + manifestReserve(tensors.size());
  for (const auto& t : tensors) size += t.storage().nbytes() + kRecordOverhead;
  std::string out;
  out.reserve(size);
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t n) {
    out.append(static_cast<const char*>(data), n);
    return n;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), tensors, writer);
  const std::string manifest = nlohmann::json{{"algorithm", "crc32"}, {"records", crcs}}.dump();
  writer.writeRecord(kChecksumRecord, manifest.data(), manifest.size());
  writer.writeEndOfFile();
  return out;
}

c10::IValue loadTensorArchive(const std::string& bytes, const std::string& path, const std::string& what) {
  const std::string name = what + " " + path;
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0)
    throw CheckpointError(name + " is not a Training Studio " + what + " (not a zip archive)");
  BytesReader adapter(bytes);
  try {
    // The adapter outlives the reader; the shared_ptr must not delete it.
    caffe2::serialize::PyTorchStreamReader reader(
        std::shared_ptr<caffe2::serialize::ReadAdapterInterface>(&adapter, [](auto*) {}));
    const std::vector<std::string> records = reader.getAllRecords();
    for (const auto& r : records)
      if (carriesCode(r))
        throw CheckpointError(name + " carries TorchScript code (its record " + r +
                              "): it was written by torch.jit.save or by Training Studio 0.1, or crafted. "
                              "Training Studio reads checkpoints as data only, so it is not loaded");
    if (!reader.hasRecord(kChecksumRecord))
      throw CheckpointError(name + " is not a Training Studio " + what + " (it has no " + kChecksumRecord + ")");
    auto [mptr, msize] = reader.getRecord(kChecksumRecord);
    const auto manifest =
        nlohmann::json::parse(std::string(static_cast<const char*>(mptr.get()), msize), nullptr, false);
    if (!manifest.is_object() || !manifest.contains("records") || !manifest["records"].is_object())
      throw CheckpointError(name + " is damaged: its " + kChecksumRecord + " is unreadable");
    const auto& crcs = manifest["records"];
    for (const auto& r : records) {
      const bool content = r == "data.pkl" || r.rfind("data/", 0) == 0;
      if (!content) continue;  // the format's own small records (version, byte order)
      if (!crcs.contains(r) || !crcs[r].is_number_unsigned())
        throw CheckpointError(name + " is damaged: its record " + r + " has no checksum");
      auto [ptr, size] = reader.getRecord(r);
      const uint32_t got = crc32Of(ptr.get(), size);
      if (got != crcs[r].get<uint32_t>())
        throw CheckpointError(name + " is damaged: record " + r +
                              " fails its CRC-32 check (the file was "
                              "changed or corrupted after it was written)");
    }
    for (const auto& [r, crc] : crcs.items())
      if (std::find(records.begin(), records.end(), r) == records.end())
        throw CheckpointError(name + " is damaged: its record " + r + " is missing");
    try {
      return torch::jit::readArchiveAndTensors("data", "", "data/", std::nullopt, std::nullopt, at::Device(at::kCPU),
                                               reader);
    } catch (const c10::Error& e) {
      throw CheckpointError(name + " holds something other than tensors and plain values, so it is not read (" +
                            e.what_without_backtrace() + ")");
    }
  } catch (const c10::Error& e) {
    throw CheckpointError(name + " is unreadable or damaged: " + e.what_without_backtrace());
  }
}

ArchiveDict::ArchiveDict(const c10::IValue& value, std::string path, std::string where)
    : m_dict(c10::StringType::get(), c10::AnyType::get()), m_path(std::move(path)), m_where(std::move(where)) {
  if (!value.isGenericDict())
    throw CheckpointError(m_path + ": " + (m_where.empty() ? std::string("its content") : m_where) +
                          " is not a dictionary");
  m_dict = value.toGenericDict();
}

bool ArchiveDict::has(const std::string& key) const { return m_dict.contains(key); }

const c10::IValue& ArchiveDict::at(const std::string& key) const {
  auto it = m_dict.find(key);
  if (it == m_dict.end())
    throw CheckpointError(m_path + " lacks \"" + (m_where.empty() ? "" : m_where + ".") + key +
                          "\": it is not a checkpoint of this version of Training Studio, or it is damaged");
  return it->value();
}

void ArchiveDict::wrongType(const std::string& key, const char* wanted) const {
  throw CheckpointError(m_path + ": \"" + (m_where.empty() ? "" : m_where + ".") + key + "\" must be " + wanted);
}

ArchiveDict ArchiveDict::dict(const std::string& key) const {
  return ArchiveDict(at(key), m_path, m_where.empty() ? key : m_where + "." + key);
}

at::Tensor ArchiveDict::tensor(const std::string& key) const {
  const auto& v = at(key);
  if (!v.isTensor()) wrongType(key, "a tensor");
  return v.toTensor();
}

std::vector<at::Tensor> ArchiveDict::tensors(const std::string& key) const {
  const auto& v = at(key);
  if (!v.isList()) wrongType(key, "a list of tensors");
  std::vector<at::Tensor> out;
  for (const c10::IValue& item : v.toListRef()) {
    if (!item.isTensor()) wrongType(key, "a list of tensors");
    out.push_back(item.toTensor());
  }
  return out;
}

int64_t ArchiveDict::integer(const std::string& key) const {
  const auto& v = at(key);
  if (!v.isInt()) wrongType(key, "a whole number");
  return v.toInt();
}

double ArchiveDict::real(const std::string& key) const {
  const auto& v = at(key);
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  wrongType(key, "a number");
}

std::string ArchiveDict::text(const std::string& key) const {
  const auto& v = at(key);
  if (!v.isString()) wrongType(key, "a string");
  return v.toStringRef();
}

std::vector<std::string> ArchiveDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : m_dict) {
    if (!item.key().isString()) throw CheckpointError(m_path + ": \"" + m_where + "\" must have names as its keys");
    out.push_back(item.key().toStringRef());
  }
  return out;
}

std::vector<std::pair<std::string, at::Tensor>> ArchiveDict::namedTensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : m_dict) {
    if (!item.key().isString() || !item.value().isTensor())
      throw CheckpointError(m_path + ": \"" + m_where + "\" must map names to tensors");
    out.emplace_back(item.key().toStringRef(), item.value().toTensor());
  }
  return out;
}

}  // namespace studio
