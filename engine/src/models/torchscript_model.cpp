#include "models/torchscript_model.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/serialization/import.h>

#include <filesystem>
#include <sstream>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "studio/sha256.h"

namespace studio {
namespace {

std::string typeOf(const torch::jit::Module& m) {
  const auto name = m.type()->name();
  return name ? name->name() : "Module";
}

}  // namespace

int64_t TorchScriptModel::countParameters(const torch::jit::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

TorchScriptModel::TorchScriptModel(std::string path) : m_path(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(m_path, ec)) throw ModelError("model.path " + m_path + " not found");
  if (!fs::is_regular_file(m_path, ec)) throw ModelError("model.path " + m_path + " is not a file");
  try {
    m_sha256 = sha256OfFile(m_path);
  } catch (const InputError& e) {
    throw ModelError(std::string("model.path: ") + e.what());
  }
  log::info("loading TorchScript model " + m_path + " (SHA-256 " + m_sha256 + "); loading it runs the code in it");
  try {
    m_module = torch::jit::load(m_path, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw ModelError("model.path " + m_path +
                     " is not a TorchScript file (save the module in Python with torch.jit.script(model).save(path); "
                     "a torch.save of a state dict is not one): " +
                     e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw ModelError("model.path " + m_path + " is not a TorchScript file: " + e.what());
  }
  if (!m_module.find_method("forward")) throw ModelError("the TorchScript model " + m_path + " has no forward method");
  m_module.train(true);
}

torch::Tensor TorchScriptModel::forward(const torch::Tensor& x) {
  c10::IValue out = m_module.forward({x});
  if (!out.isTensor())
    throw ModelError("the TorchScript model " + m_path + " returns " + out.tagKind() + ", not a tensor of logits");
  return out.toTensor();
}

std::vector<torch::Tensor> TorchScriptModel::parameters() {
  std::vector<torch::Tensor> out;
  for (const auto& [name, p] : namedParameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> TorchScriptModel::namedParameters() {
  // Frozen in Python, frozen here: those the file marks requires_grad, as it
  // was loaded (fine-tuning turns requires_grad off and on later).
  if (m_trainable.empty())
    for (const auto& p : m_module.named_parameters())
      if (p.value.requires_grad()) m_trainable.insert(p.name);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m_module.named_parameters())
    if (m_trainable.count(p.name)) out.emplace_back(p.name, p.value);
  return out;
}

std::vector<torch::Tensor> TorchScriptModel::buffers() {
  std::vector<torch::Tensor> out;
  for (const auto& b : m_module.buffers()) out.push_back(b);
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> TorchScriptModel::namedState() {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m_module.named_parameters()) out.emplace_back(p.name, p.value);
  for (const auto& b : m_module.named_buffers()) out.emplace_back(b.name, b.value);
  return out;
}

std::string TorchScriptModel::description() const {
  return "TorchScript " + std::filesystem::path(m_path).filename().string();
}

std::vector<LayerSummary> TorchScriptModel::layers(const torch::Tensor& sample) {
  // One row per submodule call in forward's top-level code, with the shape it
  // returned: forward's graph, returning those calls' outputs too, run once.
  std::vector<LayerSummary> rows;
  torch::NoGradGuard noGrad;
  const bool wasTraining = m_module.is_training();
  m_module.eval();
  std::map<std::string, torch::jit::Module> children;
  for (const auto& c : m_module.named_children()) children.emplace(c.name, c.value);
  try {
    auto graph = m_module.get_method("forward").graph()->copy();
    torch::jit::Value* self = graph->inputs()[0];
    std::vector<torch::jit::Value*> outputs;
    for (torch::jit::Node* n : graph->nodes()) {
      if (n->kind() != c10::prim::CallMethod || n->s(c10::attr::name) != "forward" || n->outputs().size() != 1)
        continue;
      torch::jit::Node* target = n->input(0)->node();
      if (target->kind() != c10::prim::GetAttr || target->input(0) != self) continue;
      const std::string name = target->s(c10::attr::name);
      auto child = children.find(name);
      if (child == children.end() || n->output()->type()->kind() != c10::TypeKind::TensorType) continue;
      rows.push_back({name, typeOf(child->second), {}, countParameters(child->second)});
      outputs.push_back(n->output());
    }
    outputs.push_back(graph->outputs()[0]);
    torch::jit::Node* tuple = graph->insertNode(graph->createTuple(outputs));
    graph->eraseOutput(0);
    graph->registerOutput(tuple->output());
    torch::jit::GraphFunction fn("studio_summary", graph, nullptr);
    torch::jit::Stack stack{m_module._ivalue(), sample};
    fn.run(stack);
    const auto values = stack.back().toTupleRef().elements();
    for (size_t i = 0; i < rows.size(); ++i) rows[i].output = values[i].toTensor().sizes().vec();
    rows.push_back({"(output)", "",
                    values.back().isTensor() ? values.back().toTensor().sizes().vec() : std::vector<int64_t>{}, 0});
  } catch (const std::exception& e) {
    // A forward this cannot follow: each child with its parameters, and the
    // model's output from a plain call.
    rows.clear();
    for (const auto& [name, child] : children) rows.push_back({name, typeOf(child), {}, countParameters(child)});
    rows.push_back({"(output)", "", forward(sample).sizes().vec(), 0});
  }
  // Parameters of the module itself, outside its children.
  int64_t own = countParameters(m_module);
  for (const auto& [name, child] : children) own -= countParameters(child);
  if (own > 0) rows.insert(rows.begin(), {"(own parameters)", typeOf(m_module), {}, own});
  m_module.train(wasTraining);
  return rows;
}

std::vector<std::string> TorchScriptModel::exportTo(const std::string& dir) {
  torch::jit::Module copy = m_module.clone();
  copy.to(torch::Device(torch::kCPU));
  {
    torch::NoGradGuard noGrad;
    for (auto p : copy.parameters()) p.set_data(p.data().contiguous());
    for (auto b : copy.buffers()) b.set_data(b.data().contiguous());
  }
  copy.eval();
  std::ostringstream bytes;
  copy.save(bytes);
  const std::string path = dir + "/" + run_files::kExportedTorchScript;
  writeFileAtomically(path, bytes.str());
  return {path};
}

}  // namespace studio
