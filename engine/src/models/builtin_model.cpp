#include "models/builtin_model.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/Generator.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <mutex>
#include <optional>

#include "models/autocast_scope.h"

#include "models/model_factory.h"
#include "nets/batch_norm.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"
#include "tensors/tensor_archive.h"

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
    : BuiltinModel(buildModel(c, input, classes), c, input, classes) {}

BuiltinModel::BuiltinModel(torch::nn::Sequential net, const ModelConfig& c, const InputShape& input, int64_t classes)
    : ModuleModel(net.ptr()),
      m_net(std::move(net)),
      m_description(c.kind + " w" + std::to_string(c.width) + " d" + std::to_string(c.depth)),
      m_config(c),
      m_input(input),
      m_classes(classes) {}

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

torch::Tensor BuiltinModel::forwardWithStage(const torch::Tensor& x, torch::Tensor& stage, std::string& name) {
  // The outputs of every layer up to the flatten, to pick the last spatial one.
  std::vector<torch::Tensor> outputs;
  torch::Tensor y = x;
  size_t i = 0, flatten = m_net->size();
  for (auto it = m_net->begin(); it != m_net->end(); ++it, ++i) {
    if (flatten == m_net->size() && shortType(m_net->ptr(i)->name()) == "Flatten") flatten = i;
    y = it->forward(y);
    if (i < flatten) outputs.push_back(y);
  }
  for (size_t k = std::min(flatten, outputs.size()); k-- > 0;) {
    const auto& t = outputs[k];
    if (t.dim() == 4 && t.size(2) * t.size(3) > 1 && shortType(m_net->ptr(k)->name()) != "AdaptiveAvgPool2d") {
      stage = t;
      name = std::to_string(k);
      return y;
    }
  }
  return Model::forwardWithStage(x, stage, name);
}

torch::Tensor BuiltinModel::forwardWithFeatures(const torch::Tensor& x, torch::Tensor& features) {
  torch::Tensor y = x;
  size_t i = 0;
  for (auto it = m_net->begin(); it != m_net->end(); ++it, ++i) {
    if (i + 1 == m_net->size()) features = y.flatten(1);  // the last layer is the classifier's Linear
    y = it->forward(y);
  }
  return y;
}

std::vector<std::string> BuiltinModel::exportTo(const std::string& dir) {
  // A plain state dict in torch.save's format: torch.load(path) in Python
  // reads it with the default weights_only=True.
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& [name, t] : namedState()) state.insert(name, t.detach().cpu().contiguous());
  const std::string path = dir + "/model.pt";
  writeFileAtomically(path, saveTensorArchive(c10::IValue(state)));
  // The same tensors for safetensors.torch.load_file, and the layers in Python.
  const std::string tensors = dir + "/model.safetensors", python = dir + "/model.py";
  writeFileAtomically(tensors, safetensorsBytes(namedState(), {{"format", "pt"}, {"model", m_description}}));
  writeFileAtomically(python, pythonSource());
  return {path, tensors, python};
}

std::string BuiltinModel::pythonSource() const {
  char dropout[32];
  std::snprintf(dropout, sizeof dropout, "%.17g", m_config.dropout);
  const std::string constants =
      "KIND = \"" + m_config.kind + "\"\nWIDTH = " + std::to_string(m_config.width) +
      "\nDEPTH = " + std::to_string(m_config.depth) + "\nDROPOUT = " + dropout +
      "\nINPUT = {\"channels\": " + std::to_string(m_input.channels) +
      ", \"height\": " + std::to_string(m_input.height) + ", \"width\": " + std::to_string(m_input.width) +
      ", \"features\": " + std::to_string(m_input.features) + "}\nCLASSES = " + std::to_string(m_classes) + "\n";
  return R"PY("""The network of a Training Studio run, in plain PyTorch: )PY" + m_description + R"PY(.

build() makes the same layers, with the same parameter names, as the studio's
built-in model, so the exported weights load into it:

    from safetensors.torch import load_file   # pip install safetensors
    from model import build
    model = build()
    model.load_state_dict(load_file("model.safetensors"))  # or torch.load("model.pt")
    model.eval()

Its input: float32 tensors [N, C, H, W] (images) or [N, features] (tables),
normalised as preprocessing.json says.
"""
import torch
from torch import nn

)PY" + constants +
         R"PY(

class ResidualBlock(nn.Module):
    """A basic residual block (two 3x3 convolutions), as torchvision's BasicBlock."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.shortcut(x) if self.shortcut is not None else x))


def build():
    layers = []
    c, h, w = INPUT["channels"], INPUT["height"], INPUT["width"]
    if KIND == "mlp":
        layers.append(nn.Flatten())
        n = INPUT["features"] or c * h * w
        for _ in range(DEPTH):
            layers += [nn.Linear(n, WIDTH), nn.ReLU()]
            if DROPOUT > 0:
                layers.append(nn.Dropout(DROPOUT))
            n = WIDTH
        layers.append(nn.Linear(n, CLASSES))
    elif KIND == "cnn":
        for i in range(DEPTH):
            out = WIDTH << i
            layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out)]
            if h >= 2 and w >= 2:  # pooling before the ReLU: the same result, a quarter of the ReLU's work
                layers.append(nn.MaxPool2d(2))
                h //= 2
                w //= 2
            layers.append(nn.ReLU())
            c = out
        if h > 7 or w > 7:
            h, w = min(h, 7), min(w, 7)
            layers.append(nn.AdaptiveAvgPool2d((h, w)))
        layers.append(nn.Flatten())
        if DROPOUT > 0:
            layers.append(nn.Dropout(DROPOUT))
        layers.append(nn.Linear(c * h * w, CLASSES))
    else:  # resnet: a stem, then DEPTH blocks, halving the size and doubling the width every second block
        layers += [nn.Conv2d(c, WIDTH, 3, padding=1, bias=False), nn.BatchNorm2d(WIDTH), nn.ReLU()]
        cin = WIDTH
        for i in range(DEPTH):
            down = i > 0 and i % 2 == 0
            out = cin * 2 if down else cin
            layers.append(ResidualBlock(cin, out, 2 if down else 1))
            cin = out
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        if DROPOUT > 0:
            layers.append(nn.Dropout(DROPOUT))
        layers.append(nn.Linear(cin, CLASSES))
    return nn.Sequential(*layers)
)PY";
}

// ---- activation checkpointing ----------------------------------------------
namespace {

// One recomputed segment of one forward pass: what its backward needs to
// run the same layers again as they ran the first time.
struct SegmentRun : torch::CustomClassHolder {
  torch::nn::Sequential net;
  size_t begin = 0, end = 0;
  std::vector<torch::Tensor> params;   // the segment's, that want gradients
  std::vector<torch::Tensor> buffers;  // BatchNorm's running statistics
  bool inputNeedsGrad = false;
  // autocast as it was in the forward pass (backward runs without it)
  at::DeviceType deviceType = at::kCPU;
  bool autocast = false;
  at::ScalarType autocastDtype = at::kFloat;
  // The random state before the forward pass, when the segment has dropout:
  // the recomputation draws the same masks.
  std::optional<at::Generator> generator;
  torch::Tensor rngState;

  torch::Tensor run(torch::Tensor x) {
    auto it = net->begin() + static_cast<std::ptrdiff_t>(begin);
    for (size_t i = begin; i < end; ++i, ++it) x = it->forward(x);
    return x;
  }
};

struct CheckpointedSegment : torch::autograd::Function<CheckpointedSegment> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                c10::intrusive_ptr<SegmentRun> run, torch::Tensor x,
                                                torch::TensorList params) {
    (void)params;  // inputs only so that their gradients flow through this node
    if (run->generator) {
      std::lock_guard<std::mutex> lock(run->generator->mutex());
      run->rngState = run->generator->get_state();
    }
    torch::Tensor y = run->run(x);  // autograd is off here: nothing is kept
    ctx->save_for_backward({x});
    ctx->saved_data["run"] = c10::IValue::make_capsule(run);
    return {y};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list gradOut) {
    auto run = c10::static_intrusive_pointer_cast<SegmentRun>(ctx->saved_data["run"].toCapsule());
    torch::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(run->inputNeedsGrad);
    // The running statistics were updated by the forward pass already: the
    // recomputation's update is undone once the gradients are taken (the
    // backward pass checks that the tensors it saved were not changed).
    std::vector<torch::Tensor> kept;
    {
      torch::NoGradGuard noGrad;
      for (const auto& b : run->buffers) kept.push_back(b.clone());
    }
    torch::Tensor y;
    {
      torch::Tensor rngNow;
      if (run->generator) {
        std::lock_guard<std::mutex> lock(run->generator->mutex());
        rngNow = run->generator->get_state();
        run->generator->set_state(run->rngState);
      }
      {
        torch::AutoGradMode grad(true);
        AutocastScope ac(run->deviceType, run->autocast, run->autocastDtype);
        y = run->run(x);
      }
      if (run->generator) {
        std::lock_guard<std::mutex> lock(run->generator->mutex());
        run->generator->set_state(rngNow);
      }
    }
    std::vector<torch::Tensor> inputs;
    if (run->inputNeedsGrad) inputs.push_back(x);
    inputs.insert(inputs.end(), run->params.begin(), run->params.end());
    const auto grads = torch::autograd::grad({y}, inputs, {gradOut[0]}, false, false, /*allow_unused=*/true);
    {
      torch::NoGradGuard noGrad;
      for (size_t i = 0; i < kept.size(); ++i) run->buffers[i].copy_(kept[i]);
    }
    torch::autograd::variable_list out;
    out.emplace_back();  // the run
    size_t g = 0;
    out.push_back(run->inputNeedsGrad ? grads[g++] : torch::Tensor());
    while (g < grads.size()) out.push_back(grads[g++]);
    return out;
  }
};

}  // namespace

torch::Tensor BuiltinModel::forward(const torch::Tensor& input) {
  if (m_segments.empty() || !m_net->is_training() || !torch::GradMode::is_enabled()) return m_net->forward(input);
  torch::Tensor x = input;
  for (const auto& [begin, end] : m_segments) {
    auto run = c10::make_intrusive<SegmentRun>();
    run->net = m_net;
    run->begin = begin;
    run->end = end;
    bool dropout = false;
    for (size_t i = begin; i < end; ++i) {
      const auto child = m_net->ptr(i);
      for (const auto& p : child->parameters())
        if (p.requires_grad()) run->params.push_back(p);
      for (const auto& b : child->buffers()) run->buffers.push_back(b);
      dropout = dropout || shortType(child->name()) == "Dropout";
    }
    run->inputNeedsGrad = x.requires_grad();
    run->deviceType = x.device().type();
    run->autocast = at::autocast::is_autocast_enabled(run->deviceType);
    run->autocastDtype = at::autocast::get_autocast_dtype(run->deviceType);
    if (dropout) run->generator = at::globalContext().defaultGenerator(x.device());
    x = CheckpointedSegment::apply(run, x, torch::TensorList(run->params))[0];
  }
  auto it = m_net->begin() + static_cast<std::ptrdiff_t>(m_plainFrom);
  for (; it != m_net->end(); ++it) x = it->forward(x);
  return x;
}

std::string BuiltinModel::checkpointActivations(int64_t blocksPerSegment) {
  // A block starts at each convolution, linear layer or residual block (a
  // stage's batch norm, activation and pooling, a hidden layer's activation
  // and dropout follow it); the last block, the classifier, is never
  // recomputed.
  std::vector<size_t> starts;
  for (size_t i = 0; i < m_net->size(); ++i) {
    const std::string type = shortType(m_net->ptr(i)->name());
    if (type == "Conv2d" || type == "Linear" || type == "ResidualBlock") starts.push_back(i);
  }
  if (!starts.empty()) starts.front() = 0;
  const auto blocks = static_cast<int64_t>(starts.size()) - 1;
  m_segments.clear();
  m_plainFrom = 0;
  if (blocks < 2)
    return "nothing to recompute: " + m_description + " has " + std::to_string(std::max<int64_t>(blocks, 0)) +
           " block(s) before its classifier";
  // Segment ends, as block indices: every k blocks, or (auto) about sqrt(blocks)
  // segments of about equal activation memory, as Chen et al. 2016 plan
  // them: a block's cost is the size of what its layers output for one
  // example (a residual block keeps about 7 tensors of its output's size).
  std::vector<int64_t> ends;
  if (blocksPerSegment > 0) {
    for (int64_t b = blocksPerSegment; b < blocks; b += blocksPerSegment) ends.push_back(b);
  } else {
    std::vector<double> cost(static_cast<size_t>(blocks), 0.0);
    const auto params = m_net->parameters();
    const torch::Device device = params.empty() ? torch::Device(torch::kCPU) : params.front().device();
    const auto rows = layers(sampleInput(m_input, 1, device));
    for (int64_t b = 0; b < blocks; ++b)
      for (size_t i = starts[static_cast<size_t>(b)]; i < starts[static_cast<size_t>(b + 1)]; ++i) {
        double n = 1;
        for (int64_t d : rows[i].output) n *= static_cast<double>(d);
        cost[static_cast<size_t>(b)] += rows[i].type == "ResidualBlock" ? 7 * n : n;
      }
    double total = 0;
    for (double c : cost) total += c;
    const double budget = total / std::max(2.0, std::round(std::sqrt(static_cast<double>(blocks))));
    double acc = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      const double c = cost[static_cast<size_t>(b)];
      if (acc > 0 && acc + c > budget) {
        ends.push_back(b);
        acc = 0;
      }
      acc += c;
    }
  }
  // The last segment runs as usual: the backward pass needs its activations at once.
  int64_t begin = 0;
  std::string sizes;
  for (int64_t end : ends) {
    m_segments.emplace_back(starts[static_cast<size_t>(begin)], starts[static_cast<size_t>(end)]);
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(end - begin);
    begin = end;
  }
  if (m_segments.empty())
    return "nothing to recompute: " + m_description + "'s " + std::to_string(blocks) + " blocks make one segment" +
           (blocksPerSegment > 0 ? " of " + std::to_string(blocksPerSegment) + " (use fewer blocks per segment)" : "");
  m_plainFrom = m_segments.back().second;
  return std::to_string(begin) + " of " + std::to_string(blocks) + " blocks recomputed, in " +
         std::to_string(m_segments.size()) + " segment(s) of " + sizes + " block(s); the last " +
         std::to_string(blocks - begin) + " block(s) and the classifier keep their activations";
}

}  // namespace studio
