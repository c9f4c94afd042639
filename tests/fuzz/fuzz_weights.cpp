// Pretrained weights (model.weights): torch.save's zip with the state-dict
// pickle machine (run/state_dict_pickle.cpp), and safetensors headers.
#include "run/weights_file.h"
#include "studio/errors.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [name, t] : readWeights(bytes, "fuzz.pth")) (void)t.sum().item<double>();
  } catch (const ModelError&) {
  }
  return 0;
}
