#include "studio/train_config.h"
#include "studio/model_kinds.h"

#include "config_text.h"
#include "studio/metric_catalog.h"
#include "studio/utf8.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "studio/class_weights.h"
#include "studio/file_io.h"
#include "studio/log.h"
#include "studio/settings_schema.h"

namespace studio {
namespace {

using nlohmann::json;

// Strict reading of one value into its member: the wrong type, or a whole
// number that does not fit, is an error naming the setting.
struct Reader {
  std::vector<ConfigError>& errors;

  void read(const std::string& path, const json& j, std::string& out) {
    if (j.is_string())
      out = j.get<std::string>();
    else if (j.is_array() && (path == "loss.class_weights" || path == "loss.pos_weight"))
      out = weightList(path, j);
    else
      errors.push_back({path, "must be a string (got " + shown(j) + ")"});
  }
  // A choice: by its name; one that is none of the choices is kept, and
  // validate() names it with the list (only where the setting applies).
  void read(const std::string& path, const json& j, ChoiceValue& out) {
    if (j.is_string())
      out.setName(j.get<std::string>());
    else
      errors.push_back({path, "must be a string (got " + shown(j) + ")"});
  }
  // A weight per class or label as a JSON list ([1, 2.5, 3]), as the README
  // allows: kept as its text ("1, 2.5, 3"), which is checked as typed text is.
  std::string weightList(const std::string& path, const json& j) {
    std::string text;
    for (const auto& v : j) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        errors.push_back({path, "must list numbers (got " + shown(v) + " in the list)"});
        return "";
      }
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, v.get<double>());
      text += (text.empty() ? "" : ", ") + std::string(buf, r.ptr);
    }
    return text;
  }
  void read(const std::string& path, const json& j, bool& out) {
    if (j.is_boolean())
      out = j.get<bool>();
    else
      errors.push_back({path, "must be true or false (got " + shown(j) + ")"});
  }
  void read(const std::string& path, const json& j, double& out) {
    if (j.is_number() && std::isfinite(j.get<double>()))
      out = j.get<double>();
    else if (j.is_number())
      errors.push_back({path, "must be a finite number (got " + shown(j) + ")"});
    else
      errors.push_back({path, "must be a number (got " + shown(j) + ")"});
  }
  // A whole number that fits I, or an error naming the value as written:
  // nothing is narrowed silently (4294967328 is not 32).
  template <class I>
  bool toInteger(const json& j, I& out, std::string& why) {
    using L = std::numeric_limits<I>;
    const std::string fits = "must be a whole number from " + std::to_string(L::min()) + " to " +
                             std::to_string(L::max()) + " (got " + shown(j) + ")";
    if (j.is_number_unsigned()) {
      const uint64_t v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(L::max())) return why = fits, false;
      out = static_cast<I>(v);
      return true;
    }
    if (j.is_number_integer()) {
      const int64_t v = j.get<int64_t>();
      if (v < 0 && std::is_unsigned_v<I>) return why = "must be >= 0 (got " + shown(j) + ")", false;
      if (!std::is_unsigned_v<I> && (v < static_cast<int64_t>(L::min()) || v > static_cast<int64_t>(L::max())))
        return why = fits, false;
      out = static_cast<I>(v);
      return true;
    }
    if (j.is_number_float()) {
      const double d = j.get<double>();
      if (!std::isfinite(d) || std::floor(d) != d) return why = "must be a whole number (got " + shown(j) + ")", false;
      // 2^63 and beyond do not fit even int64; compare in double first.
      if (d < static_cast<double>(L::min()) || d >= std::ldexp(1.0, L::digits)) return why = fits, false;
      out = static_cast<I>(d);
      return true;
    }
    why = "must be a whole number (got " + shown(j) + ")";
    return false;
  }
  template <class I>
  void readInteger(const std::string& path, const json& j, I& out) {
    std::string why;
    if (toInteger(j, out, why)) return;
    // A whole number past the member's type: the setting's own range says
    // what is allowed (train.epochs: from 0 to 1e6, not int's limits).
    const FieldSpec* spec = findSetting(path);
    if (spec && spec->range && j.is_number() && why.rfind("must be a whole number from", 0) == 0)
      why = spec->range->rule() + " (got " + shown(j) + ")";
    errors.push_back({path, why});
  }
  void read(const std::string& path, const json& j, int& out) { readInteger(path, j, out); }
  void read(const std::string& path, const json& j, int64_t& out) { readInteger(path, j, out); }
  void read(const std::string& path, const json& j, uint64_t& out) { readInteger(path, j, out); }
  void read(const std::string& path, const json& j, std::vector<int64_t>& out) {
    const std::string wrong = "must be a list of whole numbers (got " + shown(j) + ")";
    if (!j.is_array()) return errors.push_back({path, wrong});
    std::vector<int64_t> v;
    for (const json& item : j) {
      int64_t x = 0;
      std::string why;
      if (!toInteger(item, x, why)) return errors.push_back({path, wrong});
      v.push_back(x);
    }
    out = v;
  }
  void read(const std::string& path, const json& j, std::vector<std::string>& out) {
    const std::string wrong = "must be a list of strings (got " + shown(j) + ")";
    if (!j.is_array()) return errors.push_back({path, wrong});
    std::vector<std::string> v;
    for (const json& item : j) {
      if (!item.is_string()) return errors.push_back({path, wrong});
      v.push_back(item.get<std::string>());
    }
    out = v;
  }
};

// "a.b.c" -> "a", "a.b", "a.b.c"
std::vector<std::string> prefixes(const std::string& path) {
  std::vector<std::string> out;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
    out.push_back(path.substr(0, dot));
  out.push_back(path);
  return out;
}

// The keys settings JSON may hold: every setting, and the sections above them
// (and run_info, written by the engine beside the settings; informational).
struct KnownKeys {
  std::set<std::string> settings{"schema_version", "run_info"};
  std::set<std::string> sections;
  KnownKeys() {
    for (const FieldSpec& spec : settingsSchema()) {
      settings.insert(spec.path);
      auto all = prefixes(spec.path);
      all.pop_back();
      sections.insert(all.begin(), all.end());
    }
  }
};

// Every key of an object that is neither a setting nor a section of them.
void unknownKeys(const json& obj, const std::string& prefix, const KnownKeys& known, std::vector<ConfigError>& errors) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (known.settings.count(path)) continue;
    if (!known.sections.count(path))
      errors.push_back({path, "is not a known setting"});
    else if (it->is_object())
      unknownKeys(*it, path, known, errors);
  }
}

}  // namespace

// A JSON value as a message shows it: scalars as written, containers by their
// size only (dumping a hostile, deeply nested value would recurse too deep and
// say nothing useful), long strings cut.
std::string shown(const json& j) {
  if (j.is_array()) return "a list of " + std::to_string(j.size()) + " item(s)";
  if (j.is_object()) return "an object of " + std::to_string(j.size()) + " key(s)";
  if (j.is_number_float() && !std::isfinite(j.get<double>())) return "a number too large for a double";
  // Bytes that are not UTF-8 are shown replaced, never thrown over.
  std::string d = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (d.size() > 80) d = d.substr(0, 77) + "...";
  return d;
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

std::vector<std::string> processDevices(const std::string& devices) {
  std::vector<std::string> out;
  std::stringstream in(devices);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  if (out.size() == 1 && out.front().empty()) out.clear();
  return out;
}

nlohmann::json toJson(const TrainConfig& config) {
  json root = json::object();
  root["schema_version"] = config.schema_version;
  auto& c = const_cast<TrainConfig&>(config);  // the members are only read
  for (const FieldSpec& spec : settingsSchema())
    std::visit([&](auto* member) { root[json::json_pointer(jsonPointer(spec.path))] = *member; }, spec.member(c));
  return root;
}

TrainConfig configFromJson(const nlohmann::json& j, std::vector<ConfigError>& errors) {
  TrainConfig c;
  if (!j.is_object()) {
    errors.push_back({"", "settings must be a JSON object (got " + std::string(j.type_name()) + ")"});
    return c;
  }
  Reader r{errors};
  if (auto it = j.find("schema_version"); it != j.end()) r.read("schema_version", *it, c.schema_version);
  std::set<std::string> notObjects;  // sections reported as not objects, once each
  for (const FieldSpec& spec : settingsSchema()) {
    const json* node = &j;
    for (const std::string& path : prefixes(spec.path)) {
      const std::string key = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
      const auto it = node->find(key);
      if (it == node->end()) {
        node = nullptr;
        break;
      }
      node = &*it;
      if (path != spec.path && !node->is_object()) {
        if (notObjects.insert(path).second) errors.push_back({path, "must be an object (got " + shown(*node) + ")"});
        node = nullptr;
        break;
      }
    }
    if (node) std::visit([&](auto* member) { r.read(spec.path, *node, *member); }, spec.member(c));
  }
  static const KnownKeys known;
  unknownKeys(j, "", known, errors);
  // Version 1 had IDX data and built-in models only, with the same keys: it
  // reads as version 2 as it is.
  if (c.schema_version == 1) c.schema_version = kConfigSchemaVersion;
  return c;
}

static std::string joinErrors(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += "\n  " + e.text();
  return s;
}

TrainConfig loadConfigFile(const std::string& path) {
  std::string text;
  try {
    text = readFileBytes(path, "settings file");  // a FIFO is refused at once, never waited on
  } catch (const InputError& e) {
    throw ConfigFileError(e.what());
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ConfigFileError("settings file " + path + " is not valid JSON: " + e.what());
  } catch (const json::exception& e) {  // a number beyond double's range (1e400)
    throw ConfigFileError("settings file " + path + " holds a value it cannot read: " + e.what());
  }
  if (j.is_object() && j.contains("schema_version") && j["schema_version"].is_number_integer()) {
    const int64_t version = j["schema_version"].get<int64_t>();
    if (version > kConfigSchemaVersion)
      throw ConfigFileError("settings file " + path + " has schema_version " + std::to_string(version) +
                            ": it was written by a newer Training Studio (this one reads versions 1 to " +
                            std::to_string(kConfigSchemaVersion) + ")");
    if (version == 1)
      log::info("settings file " + path + " is schema version 1; read as version 2 (IDX data, as it says)");
  }
  std::vector<ConfigError> errors;
  TrainConfig c = configFromJson(j, errors);
  if (!errors.empty()) throw ConfigFileError("settings file " + path + " has errors:" + joinErrors(errors));
  return c;
}

void saveConfigFile(const TrainConfig& config, const std::string& path) {
  writeFileAtomically(path, toJson(config).dump(2) + "\n");
}

void applyOverride(TrainConfig& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigFileError("--set expects key=value (got \"" + assignment + "\")");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::parse_error&) {
    value = text;
  } catch (const json::out_of_range&) {
    throw ConfigFileError(key + " must be a finite number (got " + text + ", too large for a double)");
  }
  // Straight into the setting's member, read as a settings file reads it
  // (one setting, not the whole settings through JSON and back).
  static const KnownKeys known;
  const FieldSpec* spec = findSetting(key);
  if (!spec && key != "schema_version") {
    if (known.sections.count(key)) throw ConfigFileError(key + " is a group of settings, not one setting");
    throw ConfigFileError(key + " is not a known setting");
  }
  std::vector<ConfigError> errors;
  Reader r{errors};
  TrainConfig updated = config;
  if (spec)
    std::visit([&](auto* member) { r.read(key, value, *member); }, spec->member(updated));
  else
    r.read(key, value, updated.schema_version);
  if (updated.schema_version == 1) updated.schema_version = kConfigSchemaVersion;  // as a file's version 1 reads
  if (!errors.empty()) throw ConfigFileError("--set " + assignment + ":" + joinErrors(errors));
  config = updated;
}

const std::vector<std::string>& torchvisionBackbones() {
  static const std::vector<std::string> kinds = {"resnet18",           "resnet34",           "resnet50",
                                                 "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0"};
  return kinds;
}

bool isTorchvisionBackbone(const std::string& kind) {
  const auto& k = torchvisionBackbones();
  return std::find(k.begin(), k.end(), kind) != k.end();
}

std::string suggestedRunName(const TrainConfig& c) {
  namespace fs = std::filesystem;
  const auto stem = [](const std::string& path) {
    fs::path p = fs::path(path).lexically_normal();
    if (p.has_filename() == false) p = p.parent_path();  // "folder/"
    return p.stem().string();
  };
  std::string data = c.data.format == DataFormat::idx ? c.data.dataset.name()
                     : c.data.format == DataFormat::image_folder
                         ? stem(c.data.root)
                         : stem(c.data.root.empty() ? c.data.train_file : c.data.root);
  const std::string model = isModel(c.model.kind, ModelFamily::torchscript) ? stem(c.model.path) : c.model.kind;
  std::string name = data.empty() ? model : model.empty() ? data : data + "-" + model;
  for (char& ch : name)
    if (ch == '/' || ch == '\\' || static_cast<unsigned char>(ch) < 32 || ch == 127 || ch == ' ') ch = '-';
  while (!name.empty() && name.front() == '.') name.erase(name.begin());
  if (name.size() > 100) {  // cut at a character's start
    name.resize(100);
    while (!name.empty() && (static_cast<unsigned char>(name.back()) & 0xC0) == 0x80) name.pop_back();
    if (!name.empty() && static_cast<unsigned char>(name.back()) >= 0xC0) name.pop_back();
  }
  return name.empty() ? std::string("run") : name;
}

}  // namespace studio
