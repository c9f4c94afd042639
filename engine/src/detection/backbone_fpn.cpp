#include "detection/backbone_fpn.h"

#include <algorithm>
#include <stdexcept>

#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>

#include "nets/layers.h"
#include "nets/nets.h"
#include "studio/model_kinds.h"

namespace studio::detection {

namespace nn = torch::nn;

namespace {

enum class Extra { MaxPool, P6P7 };

// LastLevelP6P7(in, out): "p6" (3x3, stride 2) over layer4's output (in
// != out: not P5), "p7" (3x3, stride 2) over P6 after a ReLU; each
// kaiming_uniform_(a=1) with zero bias.
class P6P7Impl : public nn::Module {
 public:
  P6P7Impl(int64_t in, int64_t out) {
    p6 = register_module("p6", nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(2).padding(1)));
    p7 = register_module("p7", nn::Conv2d(nn::Conv2dOptions(out, out, 3).stride(2).padding(1)));
  }
  nn::Conv2d p6{nullptr}, p7{nullptr};
};
TORCH_MODULE(P6P7);

// FeaturePyramidNetwork: "inner_blocks.i.0" (1x1) and "layer_blocks.i.0"
// (3x3), kaiming_uniform_(a=1) with zero bias; with norm
// (norm_layer=BatchNorm2d), each a Conv2dNormActivation: the conv without
// a bias, "….1" its BatchNorm2d.
class FpnImpl : public nn::Module {
 public:
  FpnImpl(const std::vector<int64_t>& in, int64_t out, bool norm, Extra extra) : m_extra(extra) {
    inner = register_module("inner_blocks", nn::ModuleList());
    layer = register_module("layer_blocks", nn::ModuleList());
    for (const int64_t c : in) {
      if (norm) {
        inner->push_back(tv::convNormAct(c, out, 1, 1, 1, tv::Act::None, tv::NormSpec{}));
        layer->push_back(tv::convNormAct(out, out, 3, 1, 1, tv::Act::None, tv::NormSpec{}));
        continue;
      }
      tv::Seq a, b;
      a->push_back(nn::Conv2d(nn::Conv2dOptions(c, out, 1)));
      b->push_back(nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1)));
      inner->push_back(a);
      layer->push_back(b);
    }
    if (extra == Extra::P6P7) p6p7 = P6P7(register_module("extra_blocks", P6P7(in.back(), out)));
    torch::NoGradGuard noGrad;
    for (const auto& m : modules(/*include_self=*/false))
      if (auto* conv = m->as<nn::Conv2d>()) {
        nn::init::kaiming_uniform_(conv->weight, 1.0);
        if (conv->bias.defined()) nn::init::zeros_(conv->bias);
      }
  }
  // The levels' outputs, the finest first, then the extra blocks'.
  std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& x) {
    const size_t n = x.size();
    torch::Tensor last = inner->ptr<tv::SeqImpl>(n - 1)->forward(x[n - 1]);
    std::vector<torch::Tensor> results{layer->ptr<tv::SeqImpl>(n - 1)->forward(last)};
    for (size_t k = n - 1; k-- > 0;) {
      const torch::Tensor lateral = inner->ptr<tv::SeqImpl>(k)->forward(x[k]);
      const torch::Tensor topDown = at::upsample_nearest2d(last, {lateral.size(-2), lateral.size(-1)});
      last = lateral + topDown;
      results.insert(results.begin(), layer->ptr<tv::SeqImpl>(k)->forward(last));
    }
    if (m_extra == Extra::MaxPool) {
      results.push_back(torch::max_pool2d(results.back(), 1, 2, 0));
    } else {
      const torch::Tensor p6 = p6p7->p6(x.back());
      results.push_back(p6);
      results.push_back(p6p7->p7(torch::relu(p6)));
    }
    return results;
  }
  nn::ModuleList inner{nullptr}, layer{nullptr};
  P6P7 p6p7{nullptr};

 private:
  Extra m_extra;
};
TORCH_MODULE(Fpn);

}  // namespace

BackboneImpl::BackboneImpl(const std::string& kind, bool pretrained, bool frozenNorm, int trainable) {
  if (detectorFamily(kind).backbone == DetectorBackbone::ResNet50) {
    buildResnet(kind, pretrained, trainable);
  } else {
    buildMobilenet(pretrained, frozenNorm, trainable);
  }
}

void BackboneImpl::buildResnet(const std::string& kind, bool pretrained, int trainable) {
  // resnet50() with its own BatchNorm2d (the v2 detectors keep it with
  // trained weights), _resnet_fpn_extractor: "body" holds conv1, bn1 and
  // layer1-4 (the IntermediateLayerGetter's).
  const bool retina = detectorFamily(kind).head == DetectorHead::RetinaNet;
  const std::shared_ptr<TorchvisionNet> net = makeResNet("resnet50", 1000);
  auto body = std::make_shared<nn::Module>();
  for (const auto& s : net->stages) {
    if (s.name == "avgpool" || s.name == "fc" || s.name == "flatten") break;
    if (s.module) body->register_module(s.name, s.module);
    m_body.push_back(s.run);
    if (s.name.rfind("layer", 0) == 0 && !(retina && s.name == "layer1")) m_returned.push_back(m_body.size() - 1);
  }
  register_module("body", body);
  // layers_to_train: the last `trainable` of layer4, layer3, layer2, layer1,
  // conv1 (and bn1 with all five); the others' parameters frozen.
  if (trainable < 0) trainable = pretrained ? 3 : 5;
  if (trainable > 5) throw std::invalid_argument("detection: trainable backbone layers must be 0 to 5");
  std::vector<std::string> train{"layer4", "layer3", "layer2", "layer1", "conv1"};
  train.resize(static_cast<size_t>(trainable));
  if (trainable == 5) train.push_back("bn1");
  for (auto& p : body->named_parameters())
    if (std::none_of(train.begin(), train.end(), [&](const std::string& l) { return p.key().rfind(l, 0) == 0; }))
      p.value().set_requires_grad(false);
  // fasterrcnn_resnet50_fpn_v2: layer1-4, BatchNorm in the pyramid;
  // retinanet_resnet50_fpn_v2: returned_layers [2, 3, 4], no norm, P6 and P7.
  m_fpn = retina ? register_module("fpn", Fpn(std::vector<int64_t>{512, 1024, 2048}, 256, false, Extra::P6P7))
                 : register_module("fpn", Fpn(std::vector<int64_t>{256, 512, 1024, 2048}, 256, true, Extra::MaxPool));
}

void BackboneImpl::buildMobilenet(bool pretrained, bool frozenNorm, int trainable) {
  // mobilenet_v3_large(norm_layer=...) and _mobilenet_extractor(fpn=True).
  // The builder names the norm layer, so MobileNetV3's own (eps 0.001,
  // momentum 0.01) is not used: nn.BatchNorm2d's defaults, or frozen.
  const tv::NormSpec norm{1e-5, 0.1, frozenNorm};
  const std::shared_ptr<TorchvisionNet> net = makeMobileNetV3("mobilenet_v3_large", 1000, &norm);
  const std::shared_ptr<nn::Module> body = net->named_children()["features"];
  register_module("body", body);
  std::vector<size_t> stageIndices{0};
  for (const auto& s : net->stages) {
    if (s.name.rfind("features.", 0) != 0) continue;
    m_body.push_back(s.run);
  }
  // The strided blocks (_is_cn), then the last.
  const std::vector<size_t> strided{2, 4, 7, 13};
  stageIndices.insert(stageIndices.end(), strided.begin(), strided.end());
  stageIndices.push_back(m_body.size() - 1);
  const int stages = static_cast<int>(stageIndices.size());
  if (trainable < 0) trainable = pretrained ? 3 : stages;
  if (trainable > stages)
    throw std::invalid_argument("detection: trainable backbone layers must be 0 to " + std::to_string(stages));
  const size_t freezeBefore = trainable == 0 ? m_body.size() : stageIndices[static_cast<size_t>(stages - trainable)];
  const auto blocks = body->children();
  for (size_t i = 0; i < freezeBefore && i < blocks.size(); ++i)
    for (auto& p : blocks[i]->parameters()) p.set_requires_grad(false);
  m_returned = {stageIndices[static_cast<size_t>(stages - 2)], stageIndices[static_cast<size_t>(stages - 1)]};
  const std::vector<int64_t> channels{160, 960};  // blocks 13 and 16 of MobileNetV3-Large
  m_fpn = register_module("fpn", Fpn(channels, 256, false, Extra::MaxPool));
}

FeatureMaps BackboneImpl::forward(const torch::Tensor& batch) {
  std::vector<torch::Tensor> returned;
  torch::Tensor x = batch;
  for (size_t i = 0; i <= m_returned.back(); ++i) {
    x = m_body[i](x);
    if (std::find(m_returned.begin(), m_returned.end(), i) != m_returned.end()) returned.push_back(x);
  }
  const std::vector<torch::Tensor> levels = std::dynamic_pointer_cast<FpnImpl>(m_fpn)->forward(returned);
  const size_t named = returned.size();  // "0" .. the pyramid's own; then the extra blocks'
  FeatureMaps maps;
  for (size_t i = 0; i < named; ++i) maps.emplace_back(std::to_string(i), levels[i]);
  if (levels.size() == named + 1) {
    maps.emplace_back("pool", levels.back());
  } else {
    maps.emplace_back("p6", levels[named]);
    maps.emplace_back("p7", levels[named + 1]);
  }
  return maps;
}

}  // namespace studio::detection
