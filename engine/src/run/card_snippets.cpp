// The model card's "How to run it" for a model that takes a tensor (run/card_snippets.h).
#include "run/card_snippets.h"

namespace studio {

// "How to run it" for a model that takes a tensor: PyTorch, and ONNX
// Runtime in Python and C++ when the export wrote model.onnx.
void tensorSnippets(std::ostream& o, bool torchscript, bool onnx, const std::string& output, bool table,
                    const nlohmann::json& shape, size_t outputs) {
  const std::string dims = table ? "1, " + std::to_string(shape.value("features", 0))
                                 : "1, " + std::to_string(shape.value("channels", 0)) + ", " +
                                       std::to_string(shape.value("height", 0)) + ", " +
                                       std::to_string(shape.value("width", 0));
  const int64_t elements = table ? shape.value("features", int64_t{0})
                                 : shape.value("channels", int64_t{0}) * shape.value("height", int64_t{0}) *
                                       shape.value("width", int64_t{0});
  // An image model's x comes from preprocess.py, the studio's own inputs (issue 60, item 11); a table's is
  // its standardised features, zeros here.
  o << "## How to run it\n\n"
    << (table ? "Each takes `x`, the input preprocessed as `preprocessing.json` says (here zeros of the right "
                "shape).\n\n"
              : "Each takes `x`, made from image files by `preprocess.py` exactly as the studio made its inputs "
                "(as `preprocessing.json` says, to within 1e-6).\n\n")
    << "PyTorch:\n\n```python\nimport torch\n";
  if (torchscript)
    o << "model = torch.jit.load(\"model.ts\").eval()\n";
  else
    o << "from model import build; from safetensors.torch import load_file\n"
      << "model = build(); model.load_state_dict(load_file(\"model.safetensors\")); model.eval()\n";
  const std::string x = table ? "torch.zeros(" + dims + ")" : "x";
  if (!table) o << "from preprocess import preprocess\nx = preprocess([\"photo.jpg\"])  # [" << dims << "]\n";
  o << "print(model(" << x << "))\n```\n\n";
  if (onnx) {
    o << "ONNX Runtime (Python):\n\n```python\nimport numpy as np, onnxruntime as ort\n"
      << (table ? "" : "from preprocess import preprocess\n")
      << "session = ort.InferenceSession(\"model.onnx\", providers=[\"CPUExecutionProvider\"])\n"
      << "print(session.run([\"" << output
      << "\"], {\"input\": " << (table ? "np.zeros((" + dims + "), np.float32)" : "preprocess([\"photo.jpg\"]).numpy()")
      << "})[0])\n```\n\n"
      << "ONNX Runtime (C++):\n\n```cpp\nOrt::Env env; Ort::Session session(env, \"model.onnx\", "
         "Ort::SessionOptions{});\n"
      << "std::vector<int64_t> shape{" << dims << "}; std::vector<float> x(" << elements << ");\n"
      << "auto in = Ort::Value::CreateTensor<float>(Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault), "
         "x.data(), x.size(), shape.data(), shape.size());\n"
      << "const char* inputs[] = {\"input\"}; const char* outputs[] = {\"" << output << "\"};\n"
      << "auto y = session.Run(Ort::RunOptions{}, inputs, &in, 1, outputs, 1);  // y[0]: [1, " << outputs
      << "]\n```\n\n";
  } else {
    o << "For ONNX Runtime, export again with `training-studio-cli export RUN --out DIR --format onnx`.\n\n";
  }
}

}  // namespace studio
