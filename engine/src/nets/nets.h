#pragma once
// torchvision's classification networks rebuilt in LibTorch with the same
// module names, parameter names and buffer names (torchvision 0.26,
// torchvision/models/{resnet,mobilenetv3,efficientnet}.py), so that a state
// dict torchvision saves loads into them key for key, and theirs loads back
// into torchvision. Each is initialised as torchvision initialises it.
//
// A net runs as a list of named stages ("conv1", "layer1", ..., "avgpool",
// "fc"; "features.0", ..., "classifier"): the forward pass, the Model tab's
// layer table and Grad-CAM's last convolutional stage read the same list.
// Thread: engine thread (or the one thread that made it).

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

namespace studio {

struct NetStage {
  std::string name;                           // the module's name in the state dict ("layer1", "features.3")
  std::string type;                           // "Sequential", "BasicBlock", "AdaptiveAvgPool2d", ...
  std::shared_ptr<torch::nn::Module> module;  // nullptr for a stage without one (relu, the pooling)
  std::function<torch::Tensor(const torch::Tensor&)> run;
  bool spatial = true;  // before the pooling: [N, C, h, w]
};

class TorchvisionNet : public torch::nn::Module {
 public:
  torch::Tensor forward(torch::Tensor x) {
    for (const auto& s : stages) x = s.run(x);
    return x;
  }
  std::vector<NetStage> stages;
  // The classifier the data's classes replace: "fc", "classifier.3", "classifier.1".
  std::string head;
};

// The families, one per file.
// dilateStages: layer2, layer3, layer4 dilated instead of strided
// (torchvision's replace_stride_with_dilation; resnet50 only).
std::shared_ptr<TorchvisionNet> makeResNet(const std::string& kind, int64_t classes,
                                           const std::array<bool, 3>& dilateStages = {false, false, false});
namespace tv {
struct NormSpec;
}
// norm: the BatchNorm of the blocks (nullptr: MobileNetV3's own, eps 0.001
// and momentum 0.01); the detectors pass FrozenBatchNorm2d's. reducedTail:
// the last stage's channels halved (torchvision's reduced_tail, which SSDlite
// sets when it has no trained backbone). dilated: the last stage's blocks
// dilated by 2 instead of striding (torchvision's dilated, which its
// segmenters set: features at 1/16 of the input, not 1/32).
std::shared_ptr<TorchvisionNet> makeMobileNetV3(const std::string& kind, int64_t classes,
                                                const tv::NormSpec* norm = nullptr, bool reducedTail = false,
                                                bool dilated = false);
std::shared_ptr<TorchvisionNet> makeEfficientNet(const std::string& kind, int64_t classes);

}  // namespace studio
