#pragma once
// Reading a model's weights that came from elsewhere (model.weights), as data
// only:
//  - a state dict as torch.save writes it (torch.save(model.state_dict(),
//    path): the zip format of PyTorch >= 1.6, e.g. torchvision's
//    resnet18-f37072fd.pth), or a checkpoint dict holding one under
//    "state_dict", "model" or "model_state_dict";
//  - a .safetensors file (huggingface/safetensors; timm publishes these).
//
// LibTorch's unpickler cannot read a state dict (it turns the
// collections.OrderedDict a state dict is into None: "Expected GenericDict
// but got None"), so the pickle is read here by a small machine that knows
// exactly the opcodes of pickle protocol 2 a state dict uses and four
// globals: collections.OrderedDict, torch._utils._rebuild_tensor_v2,
// torch._utils._rebuild_parameter and the torch.<Type>Storage classes.
// Any other global (os.system, a class of someone's code) is refused by
// name and nothing in the file runs. Every length, offset and shape is
// checked against the bytes there are.
// Thread: any.

#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

namespace studio {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// The file's tensors by name, in the file's order, on the CPU. `path` names
// the file in messages. Throws ModelError saying what is wrong with it.
NamedTensors readWeights(const std::string& bytes, const std::string& path);

// Reads the file, then readWeights; a ModelError when it cannot be read.
NamedTensors readWeightsFile(const std::string& path);

// The two formats alone (readWeights picks by the first bytes).
NamedTensors readTorchSaveStateDict(const std::string& bytes, const std::string& path);
NamedTensors readSafetensors(const std::string& bytes, const std::string& path);

}  // namespace studio
