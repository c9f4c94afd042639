// Pretrained weights (model.weights): torch.save's zip with the state-dict
// pickle machine (tensors/state_dict_pickle.cpp), and safetensors headers.
#include "studio/errors.h"
#include "tensors/weights_file.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [name, t] : readWeights(bytes, "fuzz.pth")) (void)t.sum().item<double>();
  } catch (const ModelError&) {
  }
  return 0;
}
