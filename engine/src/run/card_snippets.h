#pragma once
// The model card's "How to run it" for a model that takes a tensor
// (classification, regression, multi-label): PyTorch, and ONNX Runtime in
// Python and C++ when the export wrote model.onnx. An image model's x comes
// from the export's preprocess.py; a table's is zeros of its shape.
// Thread: the caller's.

#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace studio {

// output: the model's output's name; shape: run_info's input shape;
// outputs: its width (classes, targets or labels).
void tensorSnippets(std::ostream& o, bool torchscript, bool onnx, const std::string& output, bool table,
                    const nlohmann::json& shape, size_t outputs);

}  // namespace studio
