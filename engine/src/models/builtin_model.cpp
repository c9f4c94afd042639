#include "models/builtin_model.h"

#include "models/model_factory.h"
#include "run/tensor_archive.h"
#include "studio/file_io.h"

namespace studio {
namespace {

// "torch::nn::Conv2dImpl" -> "Conv2d"
std::string shortType(std::string name) {
  const auto colon = name.rfind("::");
  if (colon != std::string::npos) name = name.substr(colon + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) name.resize(name.size() - 4);
  return name;
}

int64_t count(const std::vector<torch::Tensor>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

}  // namespace

BuiltinModel::BuiltinModel(const ModelConfig& c, const InputShape& input, int64_t classes)
    : m_net(buildModel(c, input, classes)),
      m_description(c.kind + " w" + std::to_string(c.width) + " d" + std::to_string(c.depth)) {}

int64_t BuiltinModel::parameterCount() { return count(m_net->parameters()); }

std::vector<std::pair<std::string, torch::Tensor>> BuiltinModel::namedState() {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m_net->named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : m_net->named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

std::vector<LayerSummary> BuiltinModel::layers(const torch::Tensor& sample) {
  std::vector<LayerSummary> rows;
  torch::NoGradGuard noGrad;
  const bool wasTraining = m_net->is_training();
  m_net->eval();
  // The layers in order, as Sequential runs them.
  torch::Tensor x = sample;
  size_t i = 0;
  for (auto it = m_net->begin(); it != m_net->end(); ++it, ++i) {
    x = it->forward(x);
    const auto child = m_net->ptr(i);
    rows.push_back({std::to_string(i), shortType(child->name()), x.sizes().vec(), count(child->parameters())});
  }
  m_net->train(wasTraining);
  return rows;
}

std::vector<std::string> BuiltinModel::exportTo(const std::string& dir) {
  // A plain state dict in torch.save's format: torch.load(path) in Python
  // reads it with the default weights_only=True.
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& [name, t] : namedState()) state.insert(name, t.detach().cpu().contiguous());
  const std::string path = dir + "/model.pt";
  writeFileAtomically(path, saveTensorArchive(c10::IValue(state)));
  return {path};
}

}  // namespace studio
