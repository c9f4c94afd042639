// torchvision's MobileNetV3 (torchvision/models/mobilenetv3.py): width 1.0,
// BatchNorm eps 0.001 and momentum 0.01, dropout 0.2 before the last
// Linear; dilated (the segmenters' backbone) as torchvision's dilated=True.
#include <torch/nn/init.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/linear.h>

#include "nets/dropout.h"
#include "nets/layers.h"

namespace studio {
namespace {

namespace nn = torch::nn;
using tv::Act;

struct Bneck {
  int64_t in, kernel, expanded, out;
  bool se;
  bool hardswish;
  int64_t stride;
  int64_t dilation = 1;
};

// InvertedResidual: "block" = [expand 1x1] depthwise [SqueezeExcitation] project.
class InvertedResidualImpl : public nn::Module {
 public:
  // As torchvision's: a dilated block keeps its input's size, and the
  // residual follows the configured stride (a dilated first block of a
  // stage has none).
  InvertedResidualImpl(const Bneck& c, const tv::NormSpec& norm) : m_residual(c.stride == 1 && c.in == c.out) {
    const Act act = c.hardswish ? Act::Hardswish : Act::ReLU;
    nn::Sequential layers;
    if (c.expanded != c.in) layers->push_back(tv::convNormAct(c.in, c.expanded, 1, 1, 1, act, norm));
    layers->push_back(tv::convNormAct(c.expanded, c.expanded, c.kernel, c.dilation > 1 ? 1 : c.stride, c.expanded, act,
                                      norm, c.dilation));
    if (c.se) layers->push_back(tv::SqueezeExcitation(c.expanded, tv::makeDivisible(c.expanded / 4), Act::ReLU, true));
    layers->push_back(tv::convNormAct(c.expanded, c.out, 1, 1, 1, Act::None, norm));
    block = register_module("block", layers);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = block->forward(x);
    return m_residual ? y + x : y;
  }
  nn::Sequential block{nullptr};

 private:
  bool m_residual;
};
TORCH_MODULE(InvertedResidual);

}  // namespace

std::shared_ptr<TorchvisionNet> makeMobileNetV3(const std::string& kind, int64_t classes, const tv::NormSpec* normSpec,
                                                bool reducedTail, bool dilated) {
  const bool large = kind == "mobilenet_v3_large";
  const int64_t r = reducedTail ? 2 : 1;  // reduce_divider: the last stage's channels halved
  // (input, kernel, expanded, out, SE, hardswish, stride), as _mobilenet_v3_conf.
  std::vector<Bneck> setting = large ? std::vector<Bneck>{{16, 3, 16, 16, false, false, 1},
                                                          {16, 3, 64, 24, false, false, 2},
                                                          {24, 3, 72, 24, false, false, 1},
                                                          {24, 5, 72, 40, true, false, 2},
                                                          {40, 5, 120, 40, true, false, 1},
                                                          {40, 5, 120, 40, true, false, 1},
                                                          {40, 3, 240, 80, false, true, 2},
                                                          {80, 3, 200, 80, false, true, 1},
                                                          {80, 3, 184, 80, false, true, 1},
                                                          {80, 3, 184, 80, false, true, 1},
                                                          {80, 3, 480, 112, true, true, 1},
                                                          {112, 3, 672, 112, true, true, 1},
                                                          {112, 5, 672, 160 / r, true, true, 2},
                                                          {160 / r, 5, 960 / r, 160 / r, true, true, 1},
                                                          {160 / r, 5, 960 / r, 160 / r, true, true, 1}}
                                     : std::vector<Bneck>{{16, 3, 16, 16, true, false, 2},
                                                          {16, 3, 72, 24, false, false, 2},
                                                          {24, 3, 88, 24, false, false, 1},
                                                          {24, 5, 96, 40, true, true, 2},
                                                          {40, 5, 240, 40, true, true, 1},
                                                          {40, 5, 240, 40, true, true, 1},
                                                          {40, 5, 120, 48, true, true, 1},
                                                          {48, 5, 144, 48, true, true, 1},
                                                          {48, 5, 288, 96 / r, true, true, 2},
                                                          {96 / r, 5, 576 / r, 96 / r, true, true, 1},
                                                          {96 / r, 5, 576 / r, 96 / r, true, true, 1}};
  if (dilated)  // the last stage's three blocks: dilation 2 (output stride 16, not 32)
    for (size_t i = setting.size() - 3; i < setting.size(); ++i) setting[i].dilation = 2;
  const int64_t lastChannel = (large ? 1280 : 1024) / r;
  const tv::NormSpec norm = normSpec ? *normSpec : tv::NormSpec{0.001, 0.01};
  auto net = std::make_shared<TorchvisionNet>();
  TorchvisionNet& n = *net;
  nn::Sequential features;
  features->push_back(tv::convNormAct(3, setting.front().in, 3, 2, 1, Act::Hardswish, norm));
  for (const Bneck& c : setting) features->push_back(InvertedResidual(c, norm));
  const int64_t lastConv = 6 * setting.back().out;
  features->push_back(tv::convNormAct(setting.back().out, lastConv, 1, 1, 1, Act::Hardswish, norm));
  n.register_module("features", features);
  tv::addStages(
      n, "features", features,
      [&](size_t i) { return i == 0 || i + 1 == features->size() ? "Conv2dNormActivation" : "InvertedResidual"; },
      true);
  tv::addPooling(n);
  nn::Sequential classifier(nn::Linear(lastConv, lastChannel),
                            nn::Functional([](const torch::Tensor& x) { return torch::hardswish(x); }), Dropout(0.2),
                            nn::Linear(lastChannel, classes));
  n.register_module("classifier", classifier);
  tv::addStages(n, "classifier", classifier, [](size_t i) {
    return std::string(i == 1 ? "Hardswish" : i == 2 ? "Dropout" : "Linear");
  });
  n.head = "classifier.3";
  tv::initConvAndNorm(n);
  {
    torch::NoGradGuard noGrad;
    for (size_t i : {size_t{0}, size_t{3}}) {
      auto* linear = classifier->ptr(i)->as<nn::Linear>();
      nn::init::normal_(linear->weight, 0, 0.01);
      nn::init::zeros_(linear->bias);
    }
  }
  return net;
}

}  // namespace studio
