#pragma once
// The settings options that several subcommands share: --preset or --config,
// then --set; and the check that a path option names something.
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/presets.h"
#include "studio/settings_schema.h"
#include "studio/train_config.h"

namespace studio::cli {

// A path option given as "" is a mistake (an unset shell variable, say),
// not the default folder: said as such, exit status 2.
inline const CLI::Validator kNamesSomething(
    [](const std::string& value) { return value.empty() ? std::string("names nothing (got \"\"); give a path") : ""; },
    "PATH", "non-empty");

// An option whose value is one of a choice's names (studio/choice.h): CLI11
// refuses any other with the list, exit status 2.
template <class E>
CLI::Option* addChoiceOption(CLI::App* cmd, const std::string& name, Choice<E>& into, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          name, [&into](const std::string& v) { into.setName(v); }, help)
      ->check(CLI::IsMember(into.names()));
}

// The dotted paths a settings file gives a value ("optimizer.lr"); none
// when it cannot be read (loading it says why).
inline std::vector<std::string> fieldsIn(const std::string& file) {
  std::vector<std::string> paths;
  const auto doc = nlohmann::json::parse(readFileBytes(file, "settings file"), nullptr, false);
  const std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& j,
                                                                                  const std::string& at) {
    if (!j.is_object()) {
      if (!at.empty()) paths.push_back(at);
      return;
    }
    for (const auto& [k, v] : j.items()) walk(v, at.empty() ? k : at + "." + k);
  };
  if (doc.is_object()) walk(doc, "");
  if (paths.empty()) paths.emplace_back("");  // an empty list would mean every field
  return paths;
}

// The settings of `train`, `summary`, `search` and the others: a preset or a file, then --set.
struct SettingsSource {
  CLI::Option* preset = nullptr;
  CLI::Option* config = nullptr;
  std::string presetName, configFile;
  std::vector<std::string> overrides;

  void addTo(CLI::App* cmd) {
    preset = cmd->add_option("--preset", presetName, "Preset name (see `presets`)");
    config = cmd->add_option("--config", configFile, "Settings JSON file")->check(kNamesSomething);
    preset->excludes(config);
    cmd->add_option("--set", overrides, "Override a setting: dotted.key=value (repeatable)");
  }

  // "settings file X" or "preset X", with the --set values after it.
  std::string describe() const {
    std::string s = !configFile.empty()
                        ? "settings file " + configFile
                        : "preset " + (presetName.empty() ? std::string("fashion-mnist-cnn") : presetName);
    for (const auto& o : overrides) s += " --set " + o;
    return s;
  }

  TrainConfig load() const {
    if (config->count() > 0 && configFile.empty()) throw ConfigFileError("--config names no file (got \"\")");
    if (preset->count() > 0 && presetName.empty()) throw ConfigFileError("--preset names no preset (got \"\")");
    TrainConfig c;
    if (!configFile.empty()) {
      if (std::filesystem::is_directory(configFile))
        throw ConfigFileError("--config " + configFile + " is a folder; give the settings JSON file");
      c = loadConfigFile(configFile);
    } else {
      const std::string name = presetName.empty() ? "fashion-mnist-cnn" : presetName;
      c = loadConfigFile(presetPath(defaultPresetDir(), name));
    }
    for (const auto& o : overrides) applyOverride(c, o);
    const auto errors = validate(c);
    if (!errors.empty()) {
      std::string text = "invalid settings in " + describe() + ":";
      for (const auto& e : errors) text += "\n  " + e.text();
      throw ConfigFileError(text);
    }
    // A --set that these settings override is said, with what acts instead;
    // so is a setting of the person's own file. (An empty list would be
    // every field: without --set, a preset's own fields were said as if
    // they had been --set.)
    if (!overrides.empty())
      for (const auto& w : settingsWithoutEffect(c, overrides))
        std::fprintf(stderr, "warning: --set %s %s\n", w.field.c_str(), w.message.c_str());
    else if (!configFile.empty())
      for (const auto& w : settingsWithoutEffect(c, fieldsIn(configFile)))
        std::fprintf(stderr, "warning: %s in %s %s\n", w.field.c_str(), configFile.c_str(), w.message.c_str());
    return c;
  }
};

}  // namespace studio::cli
