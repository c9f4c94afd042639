// The C++ side of test_backbones.py: a torchvision backbone with a state
// dict loaded (its classifier kept), in eval mode, on the CPU.
//   backbone_check logits KIND WEIGHTS INPUT.safetensors OUT.safetensors
//     the logits of INPUT's tensor "x" ([N, 3, H, W], float32) as "logits"
//   backbone_check export KIND WEIGHTS DIR
//     the model's export (model.pt, model.safetensors, model.py) into DIR
//   backbone_check names KIND CLASSES
//     every parameter and buffer name with its shape, one per line
// Exit 2 with the message on a ModelError (a file that does not fit).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "models/torchvision_model.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"
#include "tensors/weights_file.h"

using namespace studio;

namespace {

int64_t classesIn(const std::string& path, const std::string& kind) {
  const TorchvisionModel probe(kind, {3, 32, 32, 0}, 1);
  const std::string head = const_cast<TorchvisionModel&>(probe).head() + ".weight";
  for (const auto& [name, t] : readWeightsFile(path))
    if (name == head) return t.size(0);
  throw ModelError(path + " has no " + head);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "names" && argc == 4) {
      TorchvisionModel model(argv[2], {3, 32, 32, 0}, std::stoll(argv[3]));
      for (const auto& [name, t] : model.namedState()) std::cout << name << " " << t.sizes() << "\n";
      return 0;
    }
    if ((cmd == "logits" && argc == 6) || (cmd == "export" && argc == 5)) {
      const std::string kind = argv[2], weights = argv[3];
      torch::Tensor x;
      if (cmd == "logits") {
        for (const auto& [name, t] : readWeightsFile(argv[4]))
          if (name == "x") x = t;
      }
      const int64_t h = x.defined() ? x.size(2) : 64, w = x.defined() ? x.size(3) : 64;
      TorchvisionModel model(kind, {3, h, w, 0}, classesIn(weights, kind));
      nlohmann::json loaded;
      model.loadStartingWeights(weights, /*keepHead=*/true, loaded);
      model.setTraining(false);
      if (cmd == "export") {
        model.exportTo(argv[4]);
        return 0;
      }
      torch::NoGradGuard noGrad;
      const torch::Tensor logits = model.forward(x).contiguous();
      writeFileAtomically(argv[5], safetensorsBytes({{"logits", logits}}));
      return 0;
    }
    std::cerr << "usage: backbone_check logits|export|names ...\n";
    return 64;
  } catch (const ModelError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
