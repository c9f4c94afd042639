#pragma once
// The settings form's description of every TrainConfig field: where it sits,
// what editor it gets, and a one-line tooltip saying what the technique does
// and when it helps. Widget-free.
// Thread: immutable data, any thread.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace studio::ui {

enum class FieldType { Text, Path, Int, Real, Bool, Choice };

struct FieldSpec {
  std::string path;    // dotted, as in validation messages: "optimizer.lr"
  std::string group;   // the form's section
  std::string label;
  FieldType type = FieldType::Text;
  std::vector<std::string> choices;  // Choice only
  std::string tip;
};

// Every editable field in form order (schema_version is not editable).
const std::vector<FieldSpec>& settingsFields();
// The sections in form order.
const std::vector<std::string>& settingsGroups();

// Whether a field matters for these settings (momentum with SGD, the chosen
// schedule's own fields, loss scaling with fp16, ...). The form hides the
// others unless they hold an error.
bool fieldRelevant(const std::string& path, const nlohmann::json& settings);

// "optimizer.lr" -> "/optimizer/lr"
std::string jsonPointer(const std::string& dottedPath);

}  // namespace studio::ui
