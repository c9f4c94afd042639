// The C++ side of test_segmenters.py: a torchvision segmentation model
// (segmentation/segmenters.h) on the CPU.
//   segmenter_check names KIND CLASSES AUX
//     every parameter and buffer name with its shape, one per line
//   segmenter_check logits KIND CLASSES AUX WEIGHTS INPUT.safetensors OUT.safetensors
//     with WEIGHTS (torchvision's state dict, strict) loaded, in eval mode:
//     for each tensor of INPUT ([N, 3, H, W], float32) named NAME, its
//     logits as "NAME.out" (and the auxiliary head's as "NAME.aux"); and
//     the names and shapes as `names` prints them (one process for both)
// AUX: 1 with the auxiliary head (aux_loss), 0 without.
// Exit 2 with the message when the weights do not fit.
#include <iostream>
#include <map>

#include "segmentation/segmenters.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"
#include "tensors/weights_file.h"

using namespace studio;

namespace {

std::vector<std::pair<std::string, torch::Tensor>> state(torch::nn::Module& m) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : m.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "names" && argc == 5) {
      auto model = makeSegmenter(argv[2], std::stoll(argv[3]), std::string(argv[4]) == "1");
      for (const auto& [name, t] : state(*model)) std::cout << name << " " << t.sizes() << "\n";
      return 0;
    }
    if (cmd == "logits" && argc == 8) {
      auto model = makeSegmenter(argv[2], std::stoll(argv[3]), std::string(argv[4]) == "1");
      const std::string weights = argv[5];
      std::map<std::string, torch::Tensor> file;
      for (const auto& [name, t] : readWeightsFile(weights)) file[name] = t;
      torch::NoGradGuard noGrad;
      for (const auto& [name, t] : state(*model)) {
        auto it = file.find(name);
        if (it == file.end()) throw ModelError(weights + " has no " + name);
        if (it->second.sizes() != t.sizes()) throw ModelError(name + ": another shape in " + weights);
        t.copy_(it->second);
        file.erase(it);
      }
      if (!file.empty()) throw ModelError(weights + " has " + file.begin()->first + ", which the model lacks");
      model->eval();
      std::vector<std::pair<std::string, torch::Tensor>> out;
      for (const auto& [name, x] : readWeightsFile(argv[6])) {
        const SegmenterOutput o = model->forward(x);
        out.emplace_back(name + ".out", o.out.contiguous());
        if (o.aux.defined()) out.emplace_back(name + ".aux", o.aux.contiguous());
      }
      writeFileAtomically(argv[7], safetensorsBytes(out));
      for (const auto& [name, t] : state(*model)) std::cout << name << " " << t.sizes() << "\n";
      return 0;
    }
    std::cerr << "usage: segmenter_check names|logits ...\n";
    return 64;
  } catch (const ModelError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
