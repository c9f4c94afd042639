#include "models/detector_model.h"

#include <charconv>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/model_kinds.h"
#include "tensors/safetensors_file.h"

namespace studio {

namespace {

// The options the model is built with: detectorOptions, and SSDlite's
// backbone as model.weights shapes it (a classifier's: MobileNetV3's full
// tail, as torchvision's weights_backbone; a detector's or none: the reduced one).
detection::DetectorOptions buildOptions(const ModelConfig& config, int64_t classes) {
  detection::DetectorOptions o = detection::detectorOptions(config, classes);
  if (detectorFamily(o.kind).head == DetectorHead::SsdLite && !config.weights.empty())
    o.reducedTail = detection::detectorStateDict(readWeightsFile(config.weights));
  return o;
}

}  // namespace

DetectorModel::DetectorModel(const ModelConfig& config, int64_t classes)
    : DetectorModel(detection::makeDetector(buildOptions(config, classes))) {}

DetectorModel::DetectorModel(std::shared_ptr<detection::DetectorNetImpl> net)
    : ModuleModel(net), m_net(std::move(net)) {}

torch::Tensor DetectorModel::forward(const torch::Tensor&) {
  throw std::logic_error(
      m_net->options().kind +
      ": a detector's forward pass takes its images' boxes (the detection task calls boxLosses() and detectBoxes())");
}

std::vector<LayerSummary> DetectorModel::layers(const torch::Tensor&) {
  std::vector<LayerSummary> rows;
  for (const auto& child : m_net->named_children()) {
    int64_t params = 0;
    for (const auto& p : child.value()->parameters()) params += p.numel();
    LayerSummary row;
    row.name = child.key();
    // torchvision's classes for the parts.
    const bool ssd = detectorFamily(m_net->options().kind).head == DetectorHead::SsdLite;
    row.type = row.name == "backbone" ? (ssd ? "SSDLiteFeatureExtractorMobileNet" : "BackboneWithFPN")
               : row.name == "rpn"    ? "RegionProposalNetwork"
               : row.name == "head"   ? (ssd ? "SSDLiteHead" : "RetinaNetHead")
                                      : "RoIHeads";
    row.parameters = params;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string DetectorModel::description() const {
  const detection::DetectorOptions& o = m_net->options();
  // Whether the backbone's BatchNorm learns, where the weights decide it (issue 60, item 6: it switched
  // without a word, and random weights then barely learnt).
  const std::string norm = !detectorFamily(o.kind).normFollowsWeights() ? ""
                           : o.frozenNormOn() ? "; its backbone's BatchNorm frozen (FrozenBatchNorm2d)"
                                              : "; its backbone's BatchNorm trained";
  return o.kind + " (" + std::to_string(o.classes - 1) + " classes and the background" + norm + ")";
}

namespace {

// A Python literal of a double: the shortest text that reads back the same.
std::string py(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  std::string s(text, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}
std::string py(int64_t v) { return std::to_string(v); }
std::string py(const std::string& literal) { return literal; }
template <typename T>
std::string pyList(const std::vector<T>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + py(v);
  return "[" + s + "]";
}
template <typename T>
std::string pyTuple(const std::vector<T>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + py(v);
  return "(" + s + (values.size() == 1 ? ",)" : ")");
}

// model.py: torchvision's FasterRCNN, RetinaNet or SSD with the run's options as
// its keyword arguments, built as torchvision's builder for the kind builds
// it (_fasterrcnn_mobilenet_v3_large_fpn's, whose norm_layer follows the
// weights: FrozenBatchNorm2d after trained ones; fasterrcnn_resnet50_fpn_v2's;
// retinanet_resnet50_fpn_v2's; ssdlite320_mobilenet_v3_large's).
std::string detectorPython(const detection::DetectorOptions& o) {
  const auto& t = o.transform;
  const auto& r = o.rpn;
  const auto& h = o.roiHeads;
  const auto& retina = o.retina;
  const DetectorFamily& kind = detectorFamily(o.kind);
  const bool single = kind.head == DetectorHead::RetinaNet, resnet = kind.backbone == DetectorBackbone::ResNet50;
  const bool ssd = kind.head == DetectorHead::SsdLite;
  const int trainable = o.trainableBackboneLayers >= 0 ? o.trainableBackboneLayers
                        : ssd                          ? 6
                        : o.pretrained                 ? 3
                        : resnet                       ? 5
                                                       : 6;
  std::vector<std::string> sizes, ratios;
  for (const auto& level : single ? retina.anchorSizes : r.anchorSizes) sizes.push_back(pyTuple(level));
  for (const auto& level : ssd ? o.ssd.aspectRatios : single ? retina.aspectRatios : r.aspectRatios)
    ratios.push_back(pyTuple(level));
  // SSD's transform takes its fixed size, not min_size and max_size.
  std::vector<std::pair<std::string, std::string>> keywords;
  if (!ssd) keywords = {{"min_size", pyTuple(t.minSizes)}, {"max_size", py(t.maxSize)}};
  keywords.emplace_back("image_mean", pyTuple(std::vector<double>(t.mean.begin(), t.mean.end())));
  keywords.emplace_back("image_std", pyTuple(std::vector<double>(t.std.begin(), t.std.end())));
  const std::vector<std::pair<std::string, std::string>> family =
      ssd      ? std::vector<std::pair<std::string, std::string>>{{"score_thresh", py(o.ssd.scoreThresh)},
                                                                  {"nms_thresh", py(o.ssd.nms)},
                                                                  {"detections_per_img", py(o.ssd.detectionsPerImage)},
                                                                  {"iou_thresh", py(o.ssd.iou)},
                                                                  {"topk_candidates", py(o.ssd.topkCandidates)}}
      : single ? std::vector<std::pair<std::string, std::string>>{{"score_thresh", py(retina.scoreThresh)},
                                                                  {"nms_thresh", py(retina.nms)},
                                                                  {"detections_per_img", py(retina.detectionsPerImage)},
                                                                  {"fg_iou_thresh", py(retina.fgIou)},
                                                                  {"bg_iou_thresh", py(retina.bgIou)},
                                                                  {"topk_candidates", py(retina.topkCandidates)}}
               : std::vector<std::pair<std::string, std::string>>{{"rpn_pre_nms_top_n_train", py(r.preNmsTrain)},
                                                                  {"rpn_pre_nms_top_n_test", py(r.preNmsTest)},
                                                                  {"rpn_post_nms_top_n_train", py(r.postNmsTrain)},
                                                                  {"rpn_post_nms_top_n_test", py(r.postNmsTest)},
                                                                  {"rpn_nms_thresh", py(r.nms)},
                                                                  {"rpn_fg_iou_thresh", py(r.fgIou)},
                                                                  {"rpn_bg_iou_thresh", py(r.bgIou)},
                                                                  {"rpn_batch_size_per_image", py(r.batchPerImage)},
                                                                  {"rpn_positive_fraction", py(r.positiveFraction)},
                                                                  {"rpn_score_thresh", py(r.scoreThresh)},
                                                                  {"box_score_thresh", py(h.scoreThresh)},
                                                                  {"box_nms_thresh", py(h.nms)},
                                                                  {"box_detections_per_img", py(h.detectionsPerImage)},
                                                                  {"box_fg_iou_thresh", py(h.fgIou)},
                                                                  {"box_bg_iou_thresh", py(h.bgIou)},
                                                                  {"box_batch_size_per_image", py(h.batchPerImage)},
                                                                  {"box_positive_fraction", py(h.positiveFraction)}};
  keywords.insert(keywords.end(), family.begin(), family.end());
  std::string options;
  for (const auto& [name, value] : keywords) options += "    " + name + "=" + value + ",\n";
  // The imports and construction of torchvision's builder for the kind.
  std::string imports, construction;
  if (ssd) {
    imports =
        "from functools import partial\n\n"
        "import torch\n"
        "import torchvision\n"
        "from safetensors.torch import load_file\n"
        "from torchvision.models.detection.ssd import SSD\n"
        "from torchvision.models.detection.anchor_utils import DefaultBoxGenerator\n"
        "from torchvision.models.detection.ssdlite import SSDLiteHead, _mobilenet_extractor\n";
    construction =
        "    # ssdlite320_mobilenet_v3_large's: BatchNorm2d(eps=0.001, momentum=0.03) throughout.\n"
        "    norm = partial(torch.nn.BatchNorm2d, eps=0.001, momentum=0.03)\n"
        "    backbone = torchvision.models.mobilenet_v3_large(weights=None, norm_layer=norm, "
        "reduced_tail=REDUCED_TAIL)\n"
        "    backbone = _mobilenet_extractor(backbone, TRAINABLE_BACKBONE_LAYERS, norm)\n"
        "    anchors = DefaultBoxGenerator(ASPECT_RATIOS, min_ratio=" +
        py(o.ssd.minRatio) + ", max_ratio=" + py(o.ssd.maxRatio) +
        ")\n"
        "    head = SSDLiteHead(OUT_CHANNELS, anchors.num_anchors_per_location(), CLASSES, norm)\n"
        "    model = SSD(backbone, anchors, (320, 320), CLASSES, head=head, **OPTIONS)\n";
  } else if (single) {
    imports =
        "from functools import partial\n\n"
        "import torch\n"
        "import torchvision\n"
        "from safetensors.torch import load_file\n"
        "from torchvision.models.detection import RetinaNet\n"
        "from torchvision.models.detection.anchor_utils import AnchorGenerator\n"
        "from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor\n"
        "from torchvision.models.detection.retinanet import RetinaNetHead\n"
        "from torchvision.ops.feature_pyramid_network import LastLevelP6P7\n";
    construction =
        "    # retinanet_resnet50_fpn_v2's: BatchNorm2d in ResNet-50, GroupNorm in the head, the GIoU box loss.\n"
        "    backbone = torchvision.models.resnet50(weights=None)\n"
        "    backbone = _resnet_fpn_extractor(backbone, TRAINABLE_BACKBONE_LAYERS, returned_layers=[2, 3, 4],\n"
        "                                     extra_blocks=LastLevelP6P7(2048, 256))\n"
        "    anchors = AnchorGenerator(ANCHOR_SIZES, ASPECT_RATIOS)\n"
        "    head = RetinaNetHead(backbone.out_channels, anchors.num_anchors_per_location()[0], CLASSES,\n"
        "                         norm_layer=partial(torch.nn.GroupNorm, 32))\n"
        "    head.regression_head._loss_type = \"giou\"\n"
        "    model = RetinaNet(backbone, CLASSES, anchor_generator=anchors, head=head, **OPTIONS)\n";
  } else {
    imports =
        "import torch\n"
        "import torchvision\n"
        "from safetensors.torch import load_file\n"
        "from torchvision.models.detection import FasterRCNN\n"
        "from torchvision.models.detection.anchor_utils import AnchorGenerator\n"
        "from torchvision.models.detection.backbone_utils import _mobilenet_extractor, _resnet_fpn_extractor\n"
        "from torchvision.models.detection.faster_rcnn import FastRCNNConvFCHead\n"
        "from torchvision.models.detection.rpn import RPNHead\n"
        "from torchvision.ops.misc import FrozenBatchNorm2d\n";
    if (kind.masks)
      imports +=
          "from torchvision.models.detection import MaskRCNN\n"
          "from torchvision.models.detection.mask_rcnn import MaskRCNNHeads\n";
    construction =
        resnet
            ? "    # fasterrcnn_resnet50_fpn_v2's: BatchNorm2d throughout, trained weights or not.\n"
              "    backbone = torchvision.models.resnet50(weights=None)\n"
              "    backbone = _resnet_fpn_extractor(backbone, TRAINABLE_BACKBONE_LAYERS, "
              "norm_layer=torch.nn.BatchNorm2d)\n"
              "    anchors = AnchorGenerator(ANCHOR_SIZES, ASPECT_RATIOS)\n"
              "    rpn_head = RPNHead(backbone.out_channels, anchors.num_anchors_per_location()[0], conv_depth=" +
                  py(r.convDepth) +
                  ")\n"
                  "    box_head = FastRCNNConvFCHead((backbone.out_channels, 7, 7), " +
                  pyList(h.convLayers) + ", [" + py(h.representation) + "], norm_layer=torch.nn.BatchNorm2d)\n" +
                  (kind.masks ? "    # maskrcnn_resnet50_fpn_v2's mask head.\n"
                                "    mask_head = MaskRCNNHeads(backbone.out_channels, " +
                                    pyList(h.maskLayers) +
                                    ", 1, norm_layer=torch.nn.BatchNorm2d)\n"
                                    "    model = MaskRCNN(backbone, CLASSES, rpn_anchor_generator=anchors, "
                                    "rpn_head=rpn_head,\n"
                                    "                     box_head=box_head, mask_head=mask_head, **OPTIONS)\n"
                              : std::string("    model = FasterRCNN(backbone, CLASSES, rpn_anchor_generator=anchors, "
                                            "rpn_head=rpn_head,\n"
                                            "                       box_head=box_head, **OPTIONS)\n"))
            : "    norm = FrozenBatchNorm2d if FROZEN_BATCHNORM else torch.nn.BatchNorm2d\n"
              "    backbone = torchvision.models.mobilenet_v3_large(weights=None, norm_layer=norm)\n"
              "    backbone = _mobilenet_extractor(backbone, True, TRAINABLE_BACKBONE_LAYERS)\n"
              "    anchors = AnchorGenerator(ANCHOR_SIZES, ASPECT_RATIOS)\n"
              "    model = FasterRCNN(backbone, CLASSES, rpn_anchor_generator=anchors, **OPTIONS)\n";
  }
  const std::string labelZero = single ? "\nRetinaNet may also give label 0, the background no box has: the studio\n"
                                         "leaves those out (found[\"labels\"] > 0).\n"
                                       : "";
  const std::string frozen =
      ssd ? std::string("REDUCED_TAIL = ") + (o.reducedTail ? "True" : "False") +
                "  # MobileNetV3's last stage halved: torchvision's without a trained backbone\n"
                "OUT_CHANNELS = [672, " +
                (o.reducedTail ? "480" : "960") + ", 512, 256, 256, 128]\n"
      : single ? ""
               : std::string("FROZEN_BATCHNORM = ") +
                     (o.frozenNormOn() && !resnet
                          ? std::string("True  # torchvision's FrozenBatchNorm2d: ") +
                                (o.frozenNorm ? "model.detector.batchnorm frozen\n"
                                              : "the backbone's weights came trained (model.weights)\n")
                          : "False  # BatchNorm2d that learns: " +
                                std::string(resnet         ? "the ResNet-50 detectors keep it"
                                            : o.frozenNorm ? "model.detector.batchnorm trainable"
                                                           : "the backbone started from random weights") +
                                "\n");
  return R"PY("""The detector of a Training Studio run, in plain PyTorch: torchvision's
)PY" + o.kind +
         " for " + std::to_string(o.classes - 1) + R"PY( classes and the background, built as the run built it.

    from model import build
    model = build()                  # its weights from model.safetensors, loaded strict
    found = model([image])[0]        # image: float32 [3, H, W], RGB pixels / 255, any size
    found["boxes"], found["labels"], found["scores"]
)PY" +
         (kind.masks ? "    found[\"masks\"]                  # N x 1 x H x W probabilities: > 0.5 is the object\n"
                     : "") +
         R"PY(
Boxes are (x1, y1, x2, y2) in the image's pixels; label k (1 ..) is
preprocessing.json's classes[k - 1], whose id in the annotations is
categories[k - 1]["id"]. The model resizes and normalises the image itself.
Needs torch, torchvision and safetensors (pip install safetensors).
)PY" + labelZero +
         R"PY("""
import os
)PY" + (single || ssd ? "" : "\n") +
         imports + R"PY(
KIND = ")PY" +
         o.kind + R"PY("
CLASSES = )PY" +
         std::to_string(o.classes) +
         R"PY(  # with the background
)PY" + frozen +
         R"PY(TRAINABLE_BACKBONE_LAYERS = )PY" + std::to_string(trainable) + "\n" +
         (ssd ? "" : "ANCHOR_SIZES = " + pyTuple(sizes) + "\n") + R"PY(ASPECT_RATIOS = )PY" + pyTuple(ratios) + R"PY(
OPTIONS = dict(
)PY" + options +
         R"PY()
HERE = os.path.dirname(os.path.abspath(__file__))


def build(weights=os.path.join(HERE, "model.safetensors")):
    """The detector in eval mode; weights None: untrained."""
)PY" + construction +
         R"PY(    if weights:
        model.load_state_dict(load_file(weights), strict=True)
    return model.eval()
)PY";
}

}  // namespace

void DetectorModel::describeExport(nlohmann::json& pre) const {
  const auto& o = m_net->options();
  const detection::PostProcess last = o.postProcess();
  pre["detector"] = {{"kind", o.kind},
                     {"min_size", o.transform.minSizes},
                     {"max_size", o.transform.maxSize},
                     {"score_threshold", last.scoreThresh},
                     {"nms_iou", last.nms},
                     {"detections_per_image", last.detectionsPerImage}};
}

std::vector<std::string> DetectorModel::exportTo(const std::string& dir) {
  const std::string tensors = dir + "/model.safetensors", python = dir + "/model.py";
  writeFileAtomically(tensors, safetensorsBytes(namedState(), {{"format", "pt"}, {"model", m_net->options().kind}}));
  writeFileAtomically(python, detectorPython(m_net->options()));
  return {tensors, python};
}

std::string DetectorModel::loadStartingWeights(const std::string& path, bool, nlohmann::json& record) {
  const detection::DetectorWeights w = detection::loadDetectorWeights(*m_net, readWeightsFile(path), path);
  record = {{"path", path},
            {"tensors", w.tensors},
            {"backbone_only", w.backboneOnly},
            {"head_kept", w.predictorKept},
            {"file_classes", w.fileClasses}};
  return std::to_string(w.tensors) + " tensors loaded into " + description() +
         (w.backboneOnly    ? " (a classifier's: its features into the backbone)"
          : w.predictorKept ? "; its class predictor kept"
                            : "; a new class predictor for the data's " + std::to_string(classes()) +
                                  " classes (the file's had " + std::to_string(w.fileClasses - 1) + ")");
}

}  // namespace studio
