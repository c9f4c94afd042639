#include "detection/faster_rcnn.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>

#include "models/torchvision/layers.h"
#include "models/torchvision/nets.h"
#include "studio/errors.h"

namespace studio::detection {

namespace nn = torch::nn;

namespace {

// FeaturePyramidNetwork with LastLevelMaxPool (torchvision/ops/
// feature_pyramid_network.py): "inner_blocks.i.0" (1x1) and
// "layer_blocks.i.0" (3x3), kaiming_uniform_(a=1) with zero bias; with
// norm (norm_layer=BatchNorm2d), each a Conv2dNormActivation: the conv
// without a bias, "….1" its BatchNorm2d.
class FpnImpl : public nn::Module {
 public:
  FpnImpl(const std::vector<int64_t>& in, int64_t out, bool norm) {
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
    torch::NoGradGuard noGrad;
    for (const auto& m : modules(/*include_self=*/false))
      if (auto* conv = m->as<nn::Conv2d>()) {
        nn::init::kaiming_uniform_(conv->weight, 1.0);
        if (conv->bias.defined()) nn::init::zeros_(conv->bias);
      }
  }
  // The levels' outputs, the finest first, then "pool".
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
    results.push_back(torch::max_pool2d(results.back(), 1, 2, 0));
    return results;
  }
  nn::ModuleList inner{nullptr}, layer{nullptr};
};
TORCH_MODULE(Fpn);

}  // namespace

FasterRcnnOptions fasterRcnnDefaults(const std::string& kind, int64_t classes) {
  const auto& kinds = studio::detectorKinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw std::invalid_argument("unknown detector \"" + kind + "\"");
  FasterRcnnOptions o;
  o.kind = kind;
  o.classes = classes;
  if (resnetBackbone(kind)) {
    // fasterrcnn_resnet50_fpn_v2: _default_anchorgen (a size per level of
    // five), RPNHead(conv_depth=2), FastRCNNConvFCHead([256] * 4, [1024]).
    o.rpn.anchorSizes = {{32}, {64}, {128}, {256}, {512}};
    o.rpn.aspectRatios.assign(5, {0.5, 1.0, 2.0});
    o.rpn.convDepth = 2;
    o.roiHeads.convLayers = {256, 256, 256, 256};
    return o;
  }
  // _fasterrcnn_mobilenet_v3_large_fpn: three levels of anchors 32 .. 512.
  o.rpn.anchorSizes.assign(3, {32, 64, 128, 256, 512});
  o.rpn.aspectRatios.assign(3, {0.5, 1.0, 2.0});
  if (kind == "fasterrcnn_mobilenet_v3_large_320_fpn") {
    o.transform.minSizes = {320};
    o.transform.maxSize = 640;
    o.rpn.preNmsTest = 150;
    o.rpn.postNmsTest = 150;
    o.rpn.scoreThresh = 0.05;
  }
  return o;
}

bool resnetBackbone(const std::string& kind) { return kind.find("resnet50") != std::string::npos; }

FasterRcnnImpl::FasterRcnnImpl(FasterRcnnOptions options) : m_o(std::move(options)), m_transform(m_o.transform) {
  if (resnetBackbone(m_o.kind)) {
    buildResnetBackbone();
  } else {
    buildMobilenetBackbone();
  }
  rpn = register_module("rpn", Rpn(256, m_o.rpn));
  roi_heads = register_module("roi_heads", RoiHeads(256, m_o.classes, m_o.roiHeads));
}

void FasterRcnnImpl::buildResnetBackbone() {
  // resnet50() with its own BatchNorm2d (v2 keeps it with trained weights),
  // _resnet_fpn_extractor: "body" holds conv1, bn1 and layer1-4 (the
  // IntermediateLayerGetter's), the pyramid over layer1-4 with BatchNorm.
  const std::shared_ptr<TorchvisionNet> net = makeResNet("resnet50", 1000);
  backbone = register_module("backbone", std::make_shared<nn::Module>());
  auto body = std::make_shared<nn::Module>();
  for (const auto& s : net->stages) {
    if (s.name == "avgpool" || s.name == "fc" || s.name == "flatten") break;
    if (s.module) body->register_module(s.name, s.module);
    m_body.push_back(s.run);
    if (s.name.rfind("layer", 0) == 0) m_returned.push_back(m_body.size() - 1);
  }
  backbone->register_module("body", body);
  // layers_to_train: the last `trainable` of layer4, layer3, layer2, layer1,
  // conv1 (and bn1 with all five); the others' parameters frozen.
  int trainable = m_o.trainableBackboneLayers;
  if (trainable < 0) trainable = m_o.pretrained ? 3 : 5;
  if (trainable > 5) throw std::invalid_argument("detection: trainable backbone layers must be 0 to 5");
  std::vector<std::string> train{"layer4", "layer3", "layer2", "layer1", "conv1"};
  train.resize(static_cast<size_t>(trainable));
  if (trainable == 5) train.push_back("bn1");
  for (auto& p : body->named_parameters())
    if (std::none_of(train.begin(), train.end(), [&](const std::string& l) { return p.key().rfind(l, 0) == 0; }))
      p.value().set_requires_grad(false);
  m_fpn = backbone->register_module("fpn", Fpn(std::vector<int64_t>{256, 512, 1024, 2048}, 256, true).ptr());
}

void FasterRcnnImpl::buildMobilenetBackbone() {
  // mobilenet_v3_large(norm_layer=...) and _mobilenet_extractor(fpn=True).
  // The builder names the norm layer, so MobileNetV3's own (eps 0.001,
  // momentum 0.01) is not used: nn.BatchNorm2d's defaults, or frozen.
  const tv::NormSpec norm{1e-5, 0.1, m_o.pretrained};
  const std::shared_ptr<TorchvisionNet> net = makeMobileNetV3("mobilenet_v3_large", 1000, &norm);
  backbone = register_module("backbone", std::make_shared<nn::Module>());
  const std::shared_ptr<nn::Module> body = net->named_children()["features"];
  backbone->register_module("body", body);
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
  int trainable = m_o.trainableBackboneLayers;
  if (trainable < 0) trainable = m_o.pretrained ? 3 : stages;
  if (trainable > stages)
    throw std::invalid_argument("detection: trainable backbone layers must be 0 to " + std::to_string(stages));
  const size_t freezeBefore = trainable == 0 ? m_body.size() : stageIndices[static_cast<size_t>(stages - trainable)];
  const auto blocks = body->children();
  for (size_t i = 0; i < freezeBefore && i < blocks.size(); ++i)
    for (auto& p : blocks[i]->parameters()) p.set_requires_grad(false);
  m_returned = {stageIndices[static_cast<size_t>(stages - 2)], stageIndices[static_cast<size_t>(stages - 1)]};
  const std::vector<int64_t> channels{160, 960};  // blocks 13 and 16 of MobileNetV3-Large
  m_fpn = backbone->register_module("fpn", Fpn(channels, 256, false).ptr());
}

FeatureMaps FasterRcnnImpl::features(const torch::Tensor& batch) {
  std::vector<torch::Tensor> returned;
  torch::Tensor x = batch;
  for (size_t i = 0; i <= m_returned.back(); ++i) {
    x = m_body[i](x);
    if (std::find(m_returned.begin(), m_returned.end(), i) != m_returned.end()) returned.push_back(x);
  }
  const std::vector<torch::Tensor> levels = std::dynamic_pointer_cast<FpnImpl>(m_fpn)->forward(returned);
  FeatureMaps maps;
  for (size_t i = 0; i + 1 < levels.size(); ++i) maps.emplace_back(std::to_string(i), levels[i]);
  maps.emplace_back("pool", levels.back());
  return maps;
}

std::vector<Detections> FasterRcnnImpl::detect(const std::vector<torch::Tensor>& images) {
  std::vector<ImageSize> original;
  for (const auto& image : images) original.push_back({image.size(-2), image.size(-1)});
  const ImageBatch batch = m_transform(images, nullptr, false);
  const FeatureMaps maps = features(batch.tensors);
  const RpnResult proposals = rpn->forward(batch, maps, nullptr, false);
  RoiHeadsResult heads = roi_heads->forward(maps, proposals.proposals, batch.sizes, nullptr, nullptr, false);
  for (size_t i = 0; i < heads.detections.size(); ++i)
    heads.detections[i].boxes = RcnnTransform::resizeBoxes(heads.detections[i].boxes, batch.sizes[i], original[i]);
  return heads.detections;
}

DetectionLosses FasterRcnnImpl::losses(const std::vector<torch::Tensor>& images, std::vector<torch::Tensor> boxes,
                                       const std::vector<torch::Tensor>& labels) {
  if (boxes.size() != images.size() || labels.size() != images.size())
    throw std::invalid_argument("detection: each image needs its boxes and labels");
  const ImageBatch batch = m_transform(images, &boxes, true);
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].numel() == 0) continue;
    const torch::Tensor bad = (boxes[i].slice(1, 2) <= boxes[i].slice(1, 0, 2)).any(1);
    if (bad.any().item<bool>())
      throw std::invalid_argument("detection: all boxes must have positive height and width; image " +
                                  std::to_string(i) + " has " + std::to_string(bad.sum().item<int64_t>()) +
                                  " that do not");
  }
  const FeatureMaps maps = features(batch.tensors);
  const RpnResult proposals = rpn->forward(batch, maps, &boxes, true);
  std::vector<torch::Tensor> detached;
  for (const auto& p : proposals.proposals) detached.push_back(p.detach());
  const RoiHeadsResult heads = roi_heads->forward(maps, detached, batch.sizes, &boxes, &labels, true);
  return {{"loss_classifier", heads.lossClassifier},
          {"loss_box_reg", heads.lossBoxReg},
          {"loss_objectness", proposals.lossObjectness},
          {"loss_rpn_box_reg", proposals.lossBoxReg}};
}

namespace {

// The names torchvision's _load_from_state_dict still accepts (RPNHead and
// FeaturePyramidNetwork before version 2).
std::string currentName(const std::string& name) {
  static const std::regex rpn(R"(^rpn\.head\.conv\.(weight|bias)$)");
  static const std::regex fpn(R"(^backbone\.fpn\.(inner|layer)_blocks\.(\d+)\.(weight|bias)$)");
  if (std::regex_match(name, rpn)) return std::regex_replace(name, rpn, "rpn.head.conv.0.0.$1");
  if (std::regex_match(name, fpn)) return std::regex_replace(name, fpn, "backbone.fpn.$1_blocks.$2.0.$3");
  return name;
}

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
  return out;
}

}  // namespace

DetectorWeights loadDetectorWeights(FasterRcnnImpl& model, const NamedTensors& tensors, const std::string& path) {
  DetectorWeights info;
  std::map<std::string, torch::Tensor> file;
  bool allModule = !tensors.empty();
  for (const auto& [name, t] : tensors) allModule = allModule && name.rfind("module.", 0) == 0;
  bool detector = false;
  for (const auto& [raw, t] : tensors) {
    const std::string name = allModule ? raw.substr(7) : raw;
    detector = detector || name.rfind("backbone.", 0) == 0 || name.rfind("roi_heads.", 0) == 0;
    file[name] = t;
  }
  std::map<std::string, torch::Tensor> wanted;
  if (detector) {
    for (const auto& [name, t] : file) wanted[currentName(name)] = t;
  } else {
    info.backboneOnly = true;
    // A classifier's features (MobileNetV3's "features.*", ResNet's
    // "conv1.*", "layer1.*", ..) into the body; its own head left out.
    for (const auto& [name, t] : file) {
      if (name.rfind("classifier.", 0) == 0 || name.rfind("fc.", 0) == 0) continue;
      wanted["backbone.body." + (name.rfind("features.", 0) == 0 ? name.substr(9) : name)] = t;
    }
  }
  const std::string predictor = "roi_heads.box_predictor.";
  if (auto it = wanted.find(predictor + "cls_score.weight"); it != wanted.end()) {
    info.fileClasses = it->second.size(0);
    info.predictorKept = info.fileClasses == model.options().classes;
    if (!info.predictorKept)
      for (auto w = wanted.begin(); w != wanted.end();)
        w = w->first.rfind(predictor, 0) == 0 ? wanted.erase(w) : std::next(w);
  }
  std::map<std::string, torch::Tensor> own;
  for (const auto& p : model.named_parameters()) own[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) own[b.key()] = b.value();
  std::vector<std::string> missing, unexpected, shapes;
  for (const auto& [name, t] : own) {
    if (wanted.count(name) || endsWith(name, "num_batches_tracked")) continue;
    if (info.backboneOnly && name.rfind("backbone.body.", 0) != 0) continue;
    if (!info.predictorKept && name.rfind(predictor, 0) == 0) continue;
    missing.push_back(name);
  }
  for (const auto& [name, t] : wanted) {
    auto it = own.find(name);
    if (it == own.end()) {
      if (!endsWith(name, "num_batches_tracked")) unexpected.push_back(name);
    } else if (it->second.sizes() != t.sizes()) {
      std::ostringstream s;
      s << name << " is " << t.sizes() << " in the file, " << it->second.sizes() << " in " << model.options().kind;
      shapes.push_back(s.str());
    }
  }
  if (!missing.empty() || !unexpected.empty() || !shapes.empty()) {
    std::string why = path + " does not fit " + model.options().kind + ":";
    if (!missing.empty()) why += " it lacks " + listed(missing) + ";";
    if (!unexpected.empty()) why += " it has " + listed(unexpected) + " that the model has not;";
    if (!shapes.empty()) why += " " + listed(shapes) + ";";
    why.pop_back();
    throw ModelError(why);
  }
  torch::NoGradGuard noGrad;
  for (const auto& [name, t] : wanted) {
    auto it = own.find(name);
    if (it == own.end()) continue;
    it->second.copy_(t);
    ++info.tensors;
  }
  return info;
}

}  // namespace studio::detection
