#pragma once
// The rules that join settings, or that no field's range or choices say
// (studio/settings_schema.h says those): each small, named, with the
// messages that name what to change. validate() runs every one in this
// order after the fields' own checks; test_train_config breaks each one on
// its own. Torch-free.
// Thread: immutable data, any thread.

#include <string>
#include <vector>

#include "studio/train_config.h"

namespace studio {

using Errors = std::vector<ConfigError>;

struct SettingsRule {
  const char* name;  // "classification-loss": what the rule keeps true
  void (*check)(const TrainConfig& config, Errors& errors);
};

// In the order validate() reports their errors.
const std::vector<SettingsRule>& settingsRules();

}  // namespace studio
