#include "tensors/weights_file.h"

#include <algorithm>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {
namespace {

const std::map<std::string, torch::ScalarType>& safetensorsTypes() {
  static const std::map<std::string, torch::ScalarType> types = {
      {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
      {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
      {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
  return types;
}

}  // namespace

NamedTensors readSafetensors(const std::string& bytes, const std::string& path) {
  const std::string name = "model.weights " + path;
  if (bytes.size() < 8) throw ModelError(name + " is truncated (" + std::to_string(bytes.size()) + " bytes)");
  uint64_t headerSize = 0;
  for (int k = 7; k >= 0; --k) headerSize = (headerSize << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(k)]);
  if (headerSize > bytes.size() - 8)
    throw ModelError(name + "'s safetensors header says it is " + std::to_string(headerSize) +
                     " bytes long, but the file has only " + std::to_string(bytes.size() - 8) +
                     " after its length: the file is truncated or its header lies");
  const nlohmann::json header =
      nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(headerSize), nullptr,
                            /*allow_exceptions=*/false);
  if (!header.is_object()) throw ModelError(name + "'s safetensors header is not a JSON object");
  const uint64_t dataSize = bytes.size() - 8 - headerSize;
  const char* data = bytes.data() + 8 + headerSize;
  struct Entry {
    std::string key;
    torch::ScalarType type;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto& [key, v] : header.items()) {
    if (key == "__metadata__") continue;
    const std::string where = name + ": tensor \"" + key + "\" ";
    if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() || !v.contains("shape") ||
        !v["shape"].is_array() || !v.contains("data_offsets") || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2)
      throw ModelError(where + "lacks its dtype, shape or data_offsets in the header");
    auto type = safetensorsTypes().find(v["dtype"].get<std::string>());
    if (type == safetensorsTypes().end())
      throw ModelError(where + "has dtype " + v["dtype"].get<std::string>() + ", which is not read");
    Entry e{key, type->second, {}, 0, 0};
    uint64_t numel = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40))
        throw ModelError(where + "has a shape that is not a list of sizes");
      const uint64_t size = d.get<uint64_t>();
      e.shape.push_back(static_cast<int64_t>(size));
      // Checked before multiplying: 2^40 x 2^40 would wrap to 0 ("needs 0 bytes").
      if (size != 0 && numel > (uint64_t{1} << 40) / size) throw ModelError(where + "is larger than any file");
      numel *= size;
    }
    for (int k = 0; k < 2; ++k)
      if (!v["data_offsets"][k].is_number_unsigned()) throw ModelError(where + "has data_offsets that are not offsets");
    e.begin = v["data_offsets"][0].get<uint64_t>();
    e.end = v["data_offsets"][1].get<uint64_t>();
    const uint64_t want = numel * c10::elementSize(e.type);
    if (e.begin > e.end || e.end > dataSize)
      throw ModelError(where + "lies at bytes [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                       ") of a data section of " + std::to_string(dataSize) +
                       " bytes: the file is truncated or its header lies");
    if (e.end - e.begin != want)
      throw ModelError(where + "has " + std::to_string(e.end - e.begin) + " bytes for a shape that needs " +
                       std::to_string(want) + ": the header lies");
    entries.push_back(std::move(e));
  }
  // As the safetensors library validates a file: the tensors, in the order of
  // their offsets, tile the data section from its first byte to its last,
  // none overlapping another and no byte between them ("invalid offset").
  std::vector<const Entry*> byOffset;
  for (const Entry& e : entries) byOffset.push_back(&e);
  std::stable_sort(byOffset.begin(), byOffset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t reached = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : byOffset) {
    if (e->begin != reached)
      throw ModelError(name + ": tensor \"" + e->key + "\" lies at bytes [" + std::to_string(e->begin) + ", " +
                       std::to_string(e->end) + "), where " +
                       (previous ? "tensor \"" + previous->key + "\" ended at " + std::to_string(reached)
                                 : std::string("the data section begins at 0")) +
                       (e->begin < reached ? ": the two overlap" : ": bytes between them belong to no tensor") +
                       "; the file is damaged or its header lies (the safetensors library refuses it too)");
    reached = e->end;
    previous = e;
  }
  if (reached != dataSize)
    throw ModelError(name + ": its tensors end at byte " + std::to_string(reached) + " of a data section of " +
                     std::to_string(dataSize) +
                     " bytes, the rest belonging to no tensor; the file is damaged or "
                     "its header lies (the safetensors library refuses it too)");
  NamedTensors out;
  for (const Entry& e : entries) {
    torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(e.type));
    if (e.end > e.begin) std::memcpy(t.data_ptr(), data + e.begin, e.end - e.begin);
    out.emplace_back(e.key, t);
  }
  return out;
}

namespace {

// Weights that are NaN or infinite would train to nothing, and the first step
// would blame the learning rate: they are named when the file is read.
NamedTensors finiteOnly(NamedTensors tensors, const std::string& path) {
  for (const auto& [key, t] : tensors) {
    if (!t.is_floating_point() || t.numel() == 0) continue;
    const int64_t bad = (~torch::isfinite(t)).sum().item<int64_t>();
    if (bad > 0)
      throw ModelError("model.weights " + path + ": tensor \"" + key + "\" holds " + std::to_string(bad) + " of " +
                       std::to_string(t.numel()) +
                       " values that are not finite (NaN or infinite); a model cannot start from them: save the "
                       "weights again from a model whose training had not diverged");
  }
  return tensors;
}

}  // namespace

NamedTensors readWeights(const std::string& bytes, const std::string& path) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0)
    return finiteOnly(readTorchSaveStateDict(bytes, path), path);
  // safetensors: 8 bytes of header length, then the JSON header. A length that
  // fits the file and a header starting as JSON does is read as one (its
  // parser then says what is wrong with it), whatever the header holds.
  if (bytes.size() >= 9) {
    uint64_t headerSize = 0;
    for (int k = 7; k >= 0; --k) headerSize = (headerSize << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(k)]);
    const char first = bytes[8];
    if (first == '{' || (headerSize <= bytes.size() - 8 && (first == '[' || first == ' ' || first == '\n')))
      return finiteOnly(readSafetensors(bytes, path), path);
  }
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x80)
    throw ModelError("model.weights " + path +
                     " is in torch.save's legacy format (PyTorch before 1.6), which is not read: load it in Python "
                     "and save it again with torch.save(torch.load(path), new_path)");
  throw ModelError("model.weights " + path +
                   " is neither a torch.save state dict (.pth, .pt: a zip archive) nor a .safetensors file");
}

NamedTensors readWeightsFile(const std::string& path) {
  std::string bytes;
  try {
    bytes = readFileBytes(path, "model.weights");
  } catch (const std::exception& e) {
    throw ModelError(e.what());
  }
  return readWeights(bytes, path);
}

}  // namespace studio
