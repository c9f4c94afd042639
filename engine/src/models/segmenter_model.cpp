#include "models/segmenter_model.h"

#include "segmentation/segmenter_weights.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"

namespace studio {

SegmenterModel::SegmenterModel(const ModelConfig& config, int64_t classes)
    : SegmenterModel(config, classes, makeSegmenter(config.kind, classes, config.segmenter.aux_loss)) {}

SegmenterModel::SegmenterModel(const ModelConfig& config, int64_t classes, std::shared_ptr<SegmentationNet> net)
    : ModuleModel(net),
      m_kind(config.kind),
      m_classes(classes),
      m_aux(config.segmenter.aux_loss),
      m_net(std::move(net)) {}

std::vector<LayerSummary> SegmenterModel::layers(const torch::Tensor&) {
  std::vector<LayerSummary> rows;
  for (const auto& child : m_net->named_children()) {
    LayerSummary row;
    row.name = child.key();
    for (const auto& p : child.value()->parameters()) row.parameters += p.numel();
    // torchvision's classes for the parts.
    row.type = row.name == "backbone"         ? "IntermediateLayerGetter"
               : row.name == "aux_classifier" ? "FCNHead"
               : !segmenterHasAux(m_kind)     ? "LRASPPHead"
               : m_kind.rfind("fcn", 0) == 0  ? "FCNHead"
                                              : "DeepLabHead";
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string SegmenterModel::description() const {
  return m_kind + " (" + std::to_string(m_classes) + " classes" + (m_aux ? ", with its auxiliary head" : "") + ")";
}

namespace {

// model.py: torchvision's segmentation builder for the kind, with the run's
// classes and auxiliary head, loading model.safetensors strict.
std::string segmenterPython(const std::string& kind, int64_t classes, bool aux) {
  return R"PY("""The segmenter of a Training Studio run, in plain PyTorch: torchvision's
)PY" + kind +
         " for " + std::to_string(classes) +
         R"PY( classes, built as the run built it.

    from model import build
    model = build()                  # its weights from model.safetensors, loaded strict
    logits = model(x)["out"]         # x: float32 [N, 3, H, W], normalised as preprocessing.json says
    classes = logits.argmax(1)       # [N, H, W]: preprocessing.json's classes[k] per pixel

Needs torch, torchvision and safetensors (pip install safetensors).
"""
import os

import torchvision
from safetensors.torch import load_file

KIND = ")PY" +
         kind + R"PY("
CLASSES = )PY" +
         std::to_string(classes) + R"PY(
AUX_LOSS = )PY" +
         (aux ? "True" : "False") + R"PY(
HERE = os.path.dirname(os.path.abspath(__file__))


def build(weights=os.path.join(HERE, "model.safetensors")):
    """The segmenter in eval mode; weights None: untrained."""
    builder = getattr(torchvision.models.segmentation, KIND)
    extra = dict(aux_loss=True) if AUX_LOSS else {}
    model = builder(weights=None, weights_backbone=None, num_classes=CLASSES, **extra)
    if weights:
        model.load_state_dict(load_file(weights), strict=True)
    return model.eval()
)PY";
}

}  // namespace

std::vector<std::string> SegmenterModel::exportTo(const std::string& dir) {
  const std::string tensors = dir + "/model.safetensors", python = dir + "/model.py";
  writeFileAtomically(tensors, safetensorsBytes(namedState(), {{"format", "pt"}, {"model", m_kind}}));
  writeFileAtomically(python, segmenterPython(m_kind, m_classes, m_aux));
  return {tensors, python};
}

std::string SegmenterModel::loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) {
  const bool resnet50 = m_kind.find("resnet50") != std::string::npos;
  const SegmenterWeights w = loadSegmenterWeights(*m_net, readWeightsFile(path), path, keepHead, resnet50);
  record = {{"path", path},
            {"tensors", w.tensors},
            {"backbone_only", w.backboneOnly},
            {"head_kept", w.headKept},
            {"file_classes", w.fileClasses}};
  return std::to_string(w.tensors) + " tensors loaded into " + description() +
         (w.backboneOnly ? std::string(" (a classifier's: its features into the backbone)")
          : w.headKept   ? std::string("; its heads kept")
                         : "; new class layers for the data's " + std::to_string(m_classes) +
                             " classes (the file's had " + std::to_string(w.fileClasses) + ")");
}

void SegmenterModel::describeExport(nlohmann::json& pre) const {
  pre["segmenter"] = {{"kind", m_kind}, {"aux_loss", m_aux}};
}

}  // namespace studio
