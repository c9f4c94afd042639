// validate(): every setting's range and choices as the schema gives them,
// then the named rules across settings (studio/settings_rules.h), each with
// the message that names what to change. Torch-free.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_text.h"
#include "studio/settings_rules.h"
#include "studio/settings_schema.h"
#include "studio/train_config.h"
#include "studio/utf8.h"

namespace studio {

using json = nlohmann::json;

std::vector<ConfigError> validate(const TrainConfig& c) {
  std::vector<ConfigError> e;
  // Ranges and choices, as each field's spec gives them, read from the
  // members themselves (member() only points; nothing is written).
  auto& members = const_cast<TrainConfig&>(c);
  for (const FieldSpec& spec : settingsSchema()) {
    // Text goes into settings.json and folder names, whatever applies: it
    // must be UTF-8.
    auto checkText = [&](const std::string& t) {
      if (!isUtf8(t)) e.push_back({spec.path, "must be UTF-8 text (got " + shown(json(t)) + ")"});
    };
    const FieldRef member = spec.member(members);
    // A text member's value, or a choice's name as given (known or not).
    std::optional<std::string> text;
    if (const auto* t = std::get_if<std::string*>(&member)) text = **t;
    if (const auto* choice = std::get_if<ChoiceValue*>(&member)) text = (*choice)->name();
    if (text) checkText(*text);
    if (const auto* list = std::get_if<std::vector<std::string>*>(&member))
      for (const auto& item : **list) checkText(item);
    if (spec.checkOnlyWhenApplies && !settingApplies(spec, c)) continue;
    if (text && !spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), *text) == spec.choices.end()) {
      std::string list;
      for (const auto& a : spec.choices) list += (list.empty() ? "" : ", ") + a;
      e.push_back({spec.path, "must be one of " + list + " (got " + shown(json(*text)) + ")"});
    }
    if (!spec.range) continue;
    std::visit(
        [&](auto* m) {
          using T = std::remove_pointer_t<decltype(m)>;
          if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            if (spec.range->contains(static_cast<double>(*m))) return;
            const std::string got = std::is_floating_point_v<T> ? num(static_cast<double>(*m)) : std::to_string(*m);
            e.push_back({spec.path, spec.range->rule() + " (got " + got + ")"});
          }
        },
        member);
  }

  // The rules that join fields, or that no range says
  // (settings_cross_rules.cpp), each named.
  for (const SettingsRule& rule : settingsRules()) rule.check(c, e);
  return e;
}

}  // namespace studio
