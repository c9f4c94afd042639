// What tells two settings apart (studio/train_config.h): settingsChanges and
// the --set assignments that make one from the other (settingsAssignments).
#include "studio/train_config.h"

#include <map>

#include <nlohmann/json.hpp>

namespace studio {

using json = nlohmann::json;

namespace {
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = j;
  }
}
}  // namespace

json settingsChanges(const TrainConfig& a, const TrainConfig& b) {
  std::map<std::string, json> fa, fb;
  flatten(toJson(a), "", fa);
  flatten(toJson(b), "", fb);
  json out = json::object();
  for (const auto& [key, value] : fb) {
    if (key == "name" || key == "output.dir" || key == "schema_version") continue;
    auto it = fa.find(key);
    const json before = it == fa.end() ? json() : it->second;
    if (before != value) out[key] = json::array({before, value});
  }
  return out;
}

std::vector<std::string> settingsAssignments(const json& changes) {
  std::vector<std::string> out;
  for (auto it = changes.begin(); it != changes.end(); ++it) {
    out.push_back(it.key() + "=" + it.value()[1].dump());  // JSON, so "123" stays a text
  }
  return out;
}

}  // namespace studio
