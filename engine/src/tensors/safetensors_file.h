#pragma once
// Tensors in the safetensors format (huggingface/safetensors), which Python's
// `safetensors` package (safetensors.torch.load_file) and many other tools
// read without running any code: an 8-byte little-endian header length, a
// JSON header naming each tensor's dtype, shape and byte range (and string
// metadata under "__metadata__"), padded with spaces to 8 bytes, then the
// tensors' bytes, little-endian, back to back with no holes.
// LibTorch has no writer for it; the format is this small.
// Thread: any.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

namespace studio {

// The file's bytes. Throws std::invalid_argument for a dtype the format has
// no name for, or a name given twice.
std::string safetensorsBytes(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace studio
