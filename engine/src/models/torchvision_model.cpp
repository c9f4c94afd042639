#include "models/torchvision_model.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "nets/batch_norm.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/sha256.h"
#include "tensors/safetensors_file.h"
#include "tensors/tensor_archive.h"
#include "tensors/weights_file.h"

namespace studio {
namespace {

std::shared_ptr<TorchvisionNet> makeNet(const std::string& kind, int64_t classes) {
  if (kind.rfind("resnet", 0) == 0) return makeResNet(kind, classes);
  if (kind.rfind("mobilenet_v3", 0) == 0) return makeMobileNetV3(kind, classes);
  return makeEfficientNet(kind, classes);
}

std::string shape(const torch::Tensor& t) { return c10::str(t.sizes()); }

// The first few names of a list, for a message.
std::string firstOf(const std::vector<std::string>& names, size_t n = 5) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < n; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > n) out += " and " + std::to_string(names.size() - n) + " more";
  return out;
}

}  // namespace

TorchvisionModel::TorchvisionModel(const std::string& kind, const InputShape& input, int64_t classes)
    : TorchvisionModel(makeNet(kind, classes), kind, input, classes) {}

TorchvisionModel::TorchvisionModel(std::shared_ptr<TorchvisionNet> net, const std::string& kind,
                                   const InputShape& input, int64_t classes)
    : ModuleModel(net), m_net(std::move(net)), m_kind(kind), m_input(input), m_classes(classes) {}

std::string TorchvisionModel::layerGroup(const std::string& parameter) const {
  const std::string first = parameter.substr(0, parameter.find('.'));
  if (first != "features") return first;
  const size_t second = parameter.find('.', first.size() + 1);
  return parameter.substr(0, second);
}

torch::Tensor TorchvisionModel::toRgb(const torch::Tensor& x) const {
  if (x.dim() == 4 && x.size(1) == 1) return x.expand({-1, 3, -1, -1});
  return x;
}

torch::Tensor TorchvisionModel::forward(const torch::Tensor& x) { return m_net->forward(toRgb(x)); }

std::vector<LayerSummary> TorchvisionModel::layers(const torch::Tensor& sample) {
  std::vector<LayerSummary> rows;
  torch::NoGradGuard noGrad;
  const bool wasTraining = m_net->is_training();
  m_net->eval();
  torch::Tensor x = toRgb(sample);
  for (const auto& s : m_net->stages) {
    x = s.run(x);
    int64_t params = 0;
    if (s.module)
      for (const auto& p : s.module->parameters()) params += p.numel();
    rows.push_back({s.name, s.type, x.sizes().vec(), params});
  }
  m_net->train(wasTraining);
  return rows;
}

torch::Tensor TorchvisionModel::forwardWithFeatures(const torch::Tensor& input, torch::Tensor& features) {
  torch::Tensor x = toRgb(input);
  for (size_t i = 0; i < m_net->stages.size(); ++i) {
    if (i + 1 == m_net->stages.size()) features = x.flatten(1);
    x = m_net->stages[i].run(x);
  }
  return x;
}

torch::Tensor TorchvisionModel::forwardWithStage(const torch::Tensor& input, torch::Tensor& stage, std::string& name) {
  torch::Tensor x = toRgb(input);
  for (const auto& s : m_net->stages) {
    x = s.run(x);
    if (s.spatial) {
      stage = x;
      name = s.name;
    }
  }
  return x;
}

std::vector<std::string> TorchvisionModel::exportTo(const std::string& dir) {
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& [name, t] : namedState()) state.insert(name, t.detach().cpu().contiguous());
  const std::string path = dir + "/model.pt", tensors = dir + "/model.safetensors", python = dir + "/model.py";
  writeFileAtomically(path, saveTensorArchive(c10::IValue(state)));
  writeFileAtomically(tensors, safetensorsBytes(namedState(), {{"format", "pt"}, {"model", m_kind}}));
  writeFileAtomically(python, R"PY("""The network of a Training Studio run, in plain PyTorch: torchvision's )PY" +
                                  m_kind +
                                  R"PY( with a classifier for the run's classes.

    from safetensors.torch import load_file   # pip install safetensors
    from model import build
    model = build()
    model.load_state_dict(load_file("model.safetensors"))  # or torch.load("model.pt")
    model.eval()

Its input: float32 tensors [N, 3, H, W], normalised as preprocessing.json
says (a 1-channel image repeated to 3 channels).
"""
import torchvision

KIND = ")PY" + m_kind +
                                  "\"\nCLASSES = " + std::to_string(m_classes) + R"PY(


def build():
    return getattr(torchvision.models, KIND)(weights=None, num_classes=CLASSES)
)PY");
  return {path, tensors, python};
}

namespace {

// What loadPretrainedWeights did, for the log and run_info.json.
struct PretrainedLoad {
  std::string path;
  std::string sha256;       // of the file's bytes
  int64_t tensors = 0;      // loaded from the file
  bool headKept = false;    // the file's classifier kept (model.keep_head)
  std::string head;         // "fc", ...
  int64_t fileClasses = 0;  // the file's classifier's outputs
  std::string stripped;     // "module." when every name had that prefix (DataParallel)
};

// Loads model.weights into a torchvision backbone: every parameter and
// buffer but the classifier's, and the classifier's too when keepHead (its
// class count must then be the data's). A file whose every name starts with
// "module." (saved from DataParallel) loads without it. Throws ModelError
// naming the file and the first keys that differ, or the shapes that differ.
PretrainedLoad loadPretrainedWeights(TorchvisionModel& model, const std::string& path, bool keepHead) {
  // The file is read once: its tensors and its SHA-256 from the same bytes.
  std::string bytes;
  try {
    bytes = readFileBytes(path, "model.weights");
  } catch (const std::exception& e) {
    throw ModelError(e.what());
  }
  NamedTensors file = readWeights(bytes, path);
  const std::string name = "model.weights " + path;
  // A model saved from DataParallel or DistributedDataParallel names every
  // tensor "module.<name>": the same weights.
  std::string stripped;
  if (!file.empty() &&
      std::all_of(file.begin(), file.end(), [](const auto& t) { return t.first.rfind("module.", 0) == 0; })) {
    for (auto& [key, t] : file) key = key.substr(7);
    stripped = "module.";
  }
  std::map<std::string, torch::Tensor> byName(file.begin(), file.end());
  const std::string head = model.head();
  auto isHead = [&](const std::string& key) { return key == head + ".weight" || key == head + ".bias"; };
  PretrainedLoad out;
  out.sha256 = sha256Hex(bytes);
  out.stripped = stripped;
  out.path = path;
  out.head = head;
  out.headKept = keepHead;
  if (auto w = byName.find(head + ".weight"); w != byName.end() && w->second.dim() == 2)
    out.fileClasses = w->second.size(0);
  std::vector<std::string> missing, unexpected, shapes;
  std::set<std::string> known;
  auto state = model.namedState();
  for (const auto& [key, t] : state) {
    known.insert(key);
    if (isHead(key) && !keepHead) continue;
    auto it = byName.find(key);
    if (it == byName.end()) {
      missing.push_back(key);
    } else if (it->second.sizes() != t.sizes()) {
      shapes.push_back(key + " (file " + shape(it->second) + ", " + model.description() + " " + shape(t) + ")");
    }
  }
  for (const auto& [key, t] : file)
    if (!known.count(key)) unexpected.push_back(key);
  if (!missing.empty() || !unexpected.empty()) {
    std::string why = name + " does not fit model.kind " + model.description() + " (torchvision's names):";
    if (!missing.empty()) why += " it lacks " + firstOf(missing) + ";";
    if (!unexpected.empty()) why += " it has " + firstOf(unexpected) + ", which " + model.description() + " has not;";
    why +=
        " it holds the weights of another architecture, or of a model whose names carry a prefix of its own "
        "(a wrapper's attribute name)";
    throw ModelError(why);
  }
  if (!shapes.empty()) {
    if (keepHead &&
        std::all_of(shapes.begin(), shapes.end(), [&](const std::string& s) { return s.rfind(head + ".", 0) == 0; }))
      throw ModelError("model.keep_head: the classifier of " + name + " has " + std::to_string(out.fileClasses) +
                       " outputs and the data has " + std::to_string(model.classes()) +
                       " classes; turn model.keep_head off to give it a new classifier for the data's classes");
    throw ModelError(name + " does not fit model.kind " + model.description() + ": the shapes of " + firstOf(shapes) +
                     " differ (the weights of another variant of the architecture)");
  }
  torch::NoGradGuard noGrad;
  for (auto& [key, t] : state) {
    if (isHead(key) && !keepHead) continue;
    t.copy_(byName.at(key));
    ++out.tensors;
  }
  return out;
}

}  // namespace

std::string TorchvisionModel::loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) {
  const PretrainedLoad load = loadPretrainedWeights(*this, path, keepHead);
  record = {{"path", path},
            {"sha256", load.sha256},
            {"tensors", load.tensors},
            {"head", load.head},
            {"head_kept", load.headKept},
            {"file_classes", load.fileClasses},
            {"prefix_removed", load.stripped}};
  return std::to_string(load.tensors) + " tensors" +
         (load.stripped.empty() ? "" : " (their prefix " + load.stripped + " removed)") + " loaded into " +
         description() +
         (load.headKept ? "; its classifier kept"
                        : "; a new classifier " + load.head + " for the data's " + std::to_string(classes()) +
                              " outputs (the file's had " + std::to_string(load.fileClasses) + ")");
}

}  // namespace studio
