// torchvision's EfficientNet-B0 (torchvision/models/efficientnet.py): width
// and depth 1.0, SiLU, BatchNorm eps 1e-5, stochastic depth rising to 0.2
// over the blocks, dropout 0.2 before the classifier.
#include <torch/nn/init.h>
#include <torch/nn/modules/linear.h>

#include <cmath>

#include "nets/dropout.h"
#include "nets/layers.h"

namespace studio {
namespace {

namespace nn = torch::nn;
using tv::Act;

struct Stage {
  int64_t expand, kernel, stride, in, out, layers;
};

// MBConv: "block" = [expand 1x1] depthwise SqueezeExcitation project, and
// stochastic depth on the residual branch.
class MBConvImpl : public nn::Module {
 public:
  MBConvImpl(const Stage& c, double dropPath, const tv::NormSpec& norm)
      : m_residual(c.stride == 1 && c.in == c.out), m_dropPath(dropPath) {
    const int64_t expanded = tv::makeDivisible(static_cast<double>(c.in * c.expand));
    nn::Sequential layers;
    if (expanded != c.in) layers->push_back(tv::convNormAct(c.in, expanded, 1, 1, 1, Act::SiLU, norm));
    layers->push_back(tv::convNormAct(expanded, expanded, c.kernel, c.stride, expanded, Act::SiLU, norm));
    layers->push_back(tv::SqueezeExcitation(expanded, std::max<int64_t>(1, c.in / 4), Act::SiLU, false));
    layers->push_back(tv::convNormAct(expanded, c.out, 1, 1, 1, Act::None, norm));
    block = register_module("block", layers);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = block->forward(x);
    if (!m_residual) return y;
    return tv::stochasticDepthRow(y, m_dropPath, is_training()) + x;
  }
  nn::Sequential block{nullptr};

 private:
  bool m_residual;
  double m_dropPath;
};
TORCH_MODULE(MBConv);

}  // namespace

std::shared_ptr<TorchvisionNet> makeEfficientNet(const std::string&, int64_t classes) {
  // (expand ratio, kernel, stride, input, output, layers), as _efficientnet_conf for b0.
  const std::vector<Stage> setting = {{1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},  {6, 5, 2, 24, 40, 2},
                                      {6, 3, 2, 40, 80, 3},  {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4},
                                      {6, 3, 1, 192, 320, 1}};
  const double stochasticDepth = 0.2;
  const tv::NormSpec norm;
  auto net = std::make_shared<TorchvisionNet>();
  TorchvisionNet& n = *net;
  nn::Sequential features;
  features->push_back(tv::convNormAct(3, setting.front().in, 3, 2, 1, Act::SiLU, norm));
  int64_t total = 0, id = 0;
  for (const Stage& c : setting) total += c.layers;
  for (const Stage& c : setting) {
    tv::Seq stage;
    for (int64_t k = 0; k < c.layers; ++k) {
      Stage block = c;
      if (k > 0) {
        block.in = block.out;
        block.stride = 1;
      }
      stage->push_back(MBConv(block, stochasticDepth * static_cast<double>(id) / static_cast<double>(total), norm));
      ++id;
    }
    features->push_back(stage);
  }
  const int64_t lastConv = 4 * setting.back().out;
  features->push_back(tv::convNormAct(setting.back().out, lastConv, 1, 1, 1, Act::SiLU, norm));
  n.register_module("features", features);
  tv::addStages(
      n, "features", features,
      [&](size_t i) {
        return std::string(i == 0 || i + 1 == features->size() ? "Conv2dNormActivation" : "Sequential");
      },
      true);
  tv::addPooling(n);
  nn::Sequential classifier(Dropout(0.2), nn::Linear(lastConv, classes));
  n.register_module("classifier", classifier);
  tv::addStages(n, "classifier", classifier, [](size_t i) { return std::string(i == 0 ? "Dropout" : "Linear"); });
  n.head = "classifier.1";
  tv::initConvAndNorm(n);
  {
    torch::NoGradGuard noGrad;
    auto* linear = classifier->ptr(1)->as<nn::Linear>();
    const double range = 1.0 / std::sqrt(static_cast<double>(classes));
    nn::init::uniform_(linear->weight, -range, range);
    nn::init::zeros_(linear->bias);
  }
  return net;
}

}  // namespace studio
