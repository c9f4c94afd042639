// When a setting acts (studio/settings_schema.h): settingEffectNote,
// settingsWithoutEffect and learningRateSetting, read from the schema's
// facts (where each field applies, in words, and what overrides it).
#include "studio/settings_schema.h"

#include <variant>

namespace studio {

bool settingDiffersFromDefault(const FieldSpec& spec, const TrainConfig& config) {
  static TrainConfig defaults;                            // read only
  TrainConfig& given = const_cast<TrainConfig&>(config);  // member() reaches in; nothing is written
  return std::visit(
      [&](auto* value) {
        using Pointer = decltype(value);
        return *value != *std::get<Pointer>(spec.member(defaults));
      },
      spec.member(given));
}

std::string settingEffectNote(const std::string& path, const TrainConfig& config) {
  const FieldSpec* spec = findSetting(path);
  if (!spec) return "";
  // An image augmentation on a table is refused by validate(): said once, as an error.
  if (!spec->imagesOnly.empty() && config.data.format == DataFormat::csv) return "";
  if (!settingApplies(*spec, config)) {
    // Set where nothing reads it: said by name, never silently kept.
    if (!settingDiffersFromDefault(*spec, config)) return "";
    return spec->appliesWhen.empty() ? "has no effect with these settings (the run never reads it)"
                                     : "has no effect: it is read only with " + spec->appliesWhen;
  }
  if (!spec->noEffect) return "";
  return spec->noEffect(config);
}

std::string learningRateSetting(const TrainConfig& c) {
  if (c.schedule.kind == ScheduleKind::onecycle) return "schedule.onecycle.max_lr";
  if (c.schedule.kind == ScheduleKind::cyclic) return "schedule.cyclic.max_lr";
  return "optimizer.lr";
}

std::vector<ConfigError> settingsWithoutEffect(const TrainConfig& config, const std::vector<std::string>& settings) {
  std::vector<ConfigError> notes;
  auto add = [&](const std::string& path) {
    if (std::string note = settingEffectNote(path, config); !note.empty()) notes.push_back({path, std::move(note)});
  };
  if (settings.empty())
    for (const auto& s : settingsSchema()) add(s.path);
  for (const auto& s : settings) add(s.substr(0, s.find('=')));
  return notes;
}

}  // namespace studio
