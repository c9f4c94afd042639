#include "models/segmenter_model.h"

#include "studio/errors.h"

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

std::vector<std::string> SegmenterModel::exportTo(const std::string&) {
  throw ModelError("exporting " + m_kind +
                   " is not built yet (issue 61, item 5): the run's checkpoints hold its weights with torchvision's "
                   "names");
}

}  // namespace studio
