#include "tensors/safetensors_file.h"

#include <nlohmann/json.hpp>

#include <bit>
#include <set>
#include <stdexcept>

namespace studio {
namespace {

const char* dtypeName(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "F32";
    case at::kDouble:
      return "F64";
    case at::kHalf:
      return "F16";
    case at::kBFloat16:
      return "BF16";
    case at::kLong:
      return "I64";
    case at::kInt:
      return "I32";
    case at::kShort:
      return "I16";
    case at::kChar:
      return "I8";
    case at::kByte:
      return "U8";
    case at::kBool:
      return "BOOL";
    default:
      return nullptr;
  }
}

void putLittleEndian64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string safetensorsBytes(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                             const std::map<std::string, std::string>& metadata) {
  static_assert(std::endian::native == std::endian::little, "the tensors' bytes are written as they lie in memory");
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> data;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__" || !names.insert(name).second)
      throw std::invalid_argument("safetensors: the tensor name \"" + name + "\" is given twice or reserved");
    const char* dtype = dtypeName(tensor.scalar_type());
    if (!dtype)
      throw std::invalid_argument("safetensors: tensor " + name + " has type " +
                                  std::string(c10::toString(tensor.scalar_type())) + ", which the format cannot hold");
    torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
    const auto bytes = static_cast<uint64_t>(t.numel()) * static_cast<uint64_t>(t.element_size());
    header[name] = {{"dtype", dtype}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(std::move(t));
  }
  std::string json = header.dump();
  while (json.size() % 8 != 0) json.push_back(' ');  // the data starts 8-byte aligned
  std::string out;
  out.reserve(8 + json.size() + offset);
  putLittleEndian64(out, json.size());
  out += json;
  for (const auto& t : data)
    out.append(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel() * t.element_size()));
  return out;
}

}  // namespace studio
