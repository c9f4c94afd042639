#include "detection/ssdlite.h"

#include <stdexcept>
#include <utility>

#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>

#include "detection/box_coder.h"
#include "detection/box_ops.h"
#include "detection/ssd_parts.h"
#include "nets/layers.h"
#include "nets/nets.h"

namespace studio::detection {

namespace nn = torch::nn;

namespace {

// ssdlite.py's BatchNorm2d: partial(nn.BatchNorm2d, eps=0.001, momentum=0.03).
const tv::NormSpec kNorm{0.001, 0.03, false};

// _normal_init: every convolution's weight from normal(0, 0.03), its bias 0.
void normalInit(nn::Module& m) {
  torch::NoGradGuard noGrad;
  for (const auto& child : m.modules(/*include_self=*/false))
    if (auto* conv = child->as<nn::Conv2d>()) {
      nn::init::normal_(conv->weight, 0.0, 0.03);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    }
}

// _extra_block: 1x1 to half the channels, 3x3 depthwise of stride 2, 1x1 out; each with ReLU6.
tv::Seq extraBlock(int64_t in, int64_t out) {
  const int64_t mid = out / 2;
  tv::Seq s;
  s->push_back(tv::convNormAct(in, mid, 1, 1, 1, tv::Act::ReLU6, kNorm));
  s->push_back(tv::convNormAct(mid, mid, 3, 2, mid, tv::Act::ReLU6, kNorm));
  s->push_back(tv::convNormAct(mid, out, 1, 1, 1, tv::Act::ReLU6, kNorm));
  return s;
}

// _prediction_block: a 3x3 depthwise Conv2dNormActivation (ReLU6), then a 1x1 conv with bias.
tv::Seq predictionBlock(int64_t in, int64_t out) {
  tv::Seq s;
  s->push_back(tv::convNormAct(in, in, 3, 1, in, tv::Act::ReLU6, kNorm));
  s->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, 1)));
  return s;
}

// SSDScoringHead.forward: each map's N x (A K) x H x W to N x (H W A) x K, concatenated.
torch::Tensor score(const nn::ModuleList& blocks, const std::vector<torch::Tensor>& maps, int64_t k) {
  std::vector<torch::Tensor> all;
  for (size_t i = 0; i < maps.size(); ++i)
    all.push_back(flattenLevel(blocks->ptr<tv::SeqImpl>(i)->forward(maps[i]), k));
  return torch::cat(all, 1);
}

}  // namespace

SsdLiteImpl::SsdLiteImpl(DetectorOptions options) : DetectorNetImpl(std::move(options)), m_transform(m_o.transform) {
  buildBackbone();
  const int64_t tail = m_o.reducedTail ? 480 : 960;  // the last block's channels
  extra = backbone->register_module("extra", nn::ModuleList());
  for (const auto& [in, out] :
       std::vector<std::pair<int64_t, int64_t>>{{tail, 512}, {512, 256}, {256, 256}, {256, 128}})
    extra->push_back(extraBlock(in, out));
  normalInit(*extra);
  head = register_module("head", std::make_shared<nn::Module>());
  classification = head->register_module("classification_head", std::make_shared<nn::Module>())
                       ->register_module("module_list", nn::ModuleList());
  regression = head->register_module("regression_head", std::make_shared<nn::Module>())
                   ->register_module("module_list", nn::ModuleList());
  const int64_t anchors = ssdAnchorsPerPlace(m_o.ssd);
  for (const int64_t c : {int64_t{672}, tail, int64_t{512}, int64_t{256}, int64_t{256}, int64_t{128}}) {
    classification->push_back(predictionBlock(c, m_o.classes * anchors));
    regression->push_back(predictionBlock(c, 4 * anchors));
  }
  normalInit(*classification);
  normalInit(*regression);
}

void SsdLiteImpl::buildBackbone() {
  // mobilenet_v3_large(norm_layer=..., reduced_tail=...), then _mobilenet_extractor
  // and SSDLiteFeatureExtractorMobileNet(backbone, c4_pos=13).
  const std::shared_ptr<TorchvisionNet> net = makeMobileNetV3("mobilenet_v3_large", 1000, &kNorm, m_o.reducedTail);
  const auto blocks = std::dynamic_pointer_cast<nn::SequentialImpl>(net->named_children()["features"]);
  if (m_o.reducedTail) normalInit(*blocks);  // torchvision's init without a trained backbone
  constexpr size_t c4 = 13;
  const auto expand = std::dynamic_pointer_cast<nn::SequentialImpl>(blocks->ptr(c4)->named_children()["block"]);
  const auto stage = [&](size_t i) { return net->stages.at(i).run; };  // "features.i"
  const auto part = [expand](size_t k) {
    return
        [expand, k](const torch::Tensor& x) { return (expand->begin() + static_cast<std::ptrdiff_t>(k))->forward(x); };
  };
  backbone = register_module("backbone", std::make_shared<nn::Module>());
  const auto features = backbone->register_module("features", std::make_shared<nn::Module>());
  // features.0: blocks 0 .. 12 and block 13's expansion (up to C4's expansion layer).
  const auto first = features->register_module("0", std::make_shared<nn::Module>());
  for (size_t i = 0; i < c4; ++i) {
    first->register_module(std::to_string(i), blocks->ptr(i));
    m_features[0].push_back(stage(i));
  }
  first->register_module(std::to_string(c4), expand->ptr(0));
  m_features[0].push_back(part(0));
  // features.1: block 13 from its depthwise conv ("0.1" .. "0.3", no residual), then blocks 14 .. 16.
  const auto second = features->register_module("1", std::make_shared<nn::Module>());
  const auto rest = second->register_module("0", std::make_shared<nn::Module>());
  for (size_t k = 1; k < expand->size(); ++k) {
    rest->register_module(std::to_string(k), expand->ptr(k));
    m_features[1].push_back(part(k));
  }
  for (size_t i = c4 + 1; i < blocks->size(); ++i) {
    second->register_module(std::to_string(i - c4), blocks->ptr(i));
    m_features[1].push_back(stage(i));
  }
  // _mobilenet_extractor: the blocks before the trainable stages frozen
  // (stages at blocks 0, 2, 4, 7, 13, 16; all six trained by default).
  const std::vector<size_t> stageIndices{0, 2, 4, 7, 13, 16};
  const int trainable = m_o.trainableBackboneLayers < 0 ? 6 : m_o.trainableBackboneLayers;
  if (trainable > 6) throw std::invalid_argument("detection: trainable backbone layers must be 0 to 6");
  const size_t freezeBefore = trainable == 0 ? blocks->size() : stageIndices[static_cast<size_t>(6 - trainable)];
  for (size_t i = 0; i < freezeBefore; ++i)
    for (auto& p : blocks->ptr(i)->parameters()) p.set_requires_grad(false);
}

SsdLiteImpl::Outputs SsdLiteImpl::run(const ImageBatch& batch) {
  std::vector<torch::Tensor> maps;
  torch::Tensor x = batch.tensors;
  for (const auto& blocks : m_features) {
    for (const auto& block : blocks) x = block(x);
    maps.push_back(x);
  }
  for (size_t i = 0; i < extra->size(); ++i) {
    x = extra->ptr<tv::SeqImpl>(i)->forward(x);
    maps.push_back(x);
  }
  std::vector<std::array<int64_t, 2>> grids;
  for (const auto& m : maps) grids.push_back({m.size(-2), m.size(-1)});
  Outputs o;
  o.logits = score(classification, maps, m_o.classes);
  o.codes = score(regression, maps, 4);
  o.anchors = defaultBoxes(m_o.ssd, grids, batch.tensors.size(-2), batch.tensors.size(-1), maps.front().options());
  return o;
}

std::vector<Detections> SsdLiteImpl::detect(const std::vector<torch::Tensor>& images) {
  std::vector<ImageSize> original;
  for (const auto& image : images) original.push_back({image.size(-2), image.size(-1)});
  const ImageBatch batch = m_transform(images, nullptr, false);
  const auto [logits, codes, anchors] = run(batch);
  std::vector<Detections> out = ssdDetections(m_o.ssd, logits, codes, anchors, batch.sizes);
  for (size_t i = 0; i < out.size(); ++i)
    out[i].boxes = RcnnTransform::resizeBoxes(out[i].boxes, batch.sizes[i], original[i]);
  return out;
}

DetectionLosses SsdLiteImpl::losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                    const std::vector<torch::Tensor>& labels) {
  if (boxes.size() != images.size() || labels.size() != images.size())
    throw std::invalid_argument("detection: each image needs its boxes and labels");
  const ImageBatch batch = m_transform(images, &boxes, true);
  checkPositiveBoxes(boxes);
  const auto [logits, codes, anchors] = run(batch);
  std::vector<torch::Tensor> matched;
  for (const auto& b : boxes)
    matched.push_back(b.numel() == 0 ? torch::full({anchors.size(0)}, int64_t{-1},
                                                   torch::TensorOptions().dtype(torch::kLong).device(anchors.device()))
                                     : ssdMatch(boxIou(b, anchors), m_o.ssd.iou));
  auto [box, cls] = ssdLosses(m_o.ssd, logits, codes, anchors, boxes, labels, matched);
  return {{"bbox_regression", box}, {"classification", cls}};
}

}  // namespace studio::detection
