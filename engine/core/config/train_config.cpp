#include "studio/train_config.h"
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

std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

}  // namespace

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
    if (const auto* text = std::get_if<std::string*>(&member)) checkText(**text);
    if (const auto* list = std::get_if<std::vector<std::string>*>(&member))
      for (const auto& item : **list) checkText(item);
    if (spec.checkOnlyWhenApplies && !settingApplies(spec, c)) continue;
    if (const auto* text = std::get_if<std::string*>(&member);
        text && !spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), **text) == spec.choices.end()) {
      std::string list;
      for (const auto& a : spec.choices) list += (list.empty() ? "" : ", ") + a;
      e.push_back({spec.path, "must be one of " + list + " (got " + shown(json(**text)) + ")"});
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

  // The rules that join fields, or that no range says.
  if (c.schema_version != kConfigSchemaVersion)
    e.push_back({"schema_version", "must be " + std::to_string(kConfigSchemaVersion) + " (got " +
                                       std::to_string(c.schema_version) + ")"});
  // The name becomes part of a folder's name: nothing that leaves the output
  // folder, hides the folder or upsets a terminal.
  if (c.name.empty()) e.push_back({"name", "must not be empty"});
  const bool control = std::any_of(c.name.begin(), c.name.end(),
                                   [](char ch) { return static_cast<unsigned char>(ch) < 32 || ch == 127; });
  if (c.name.find_first_of("/\\") != std::string::npos)
    e.push_back({"name", "must not contain '/' or '\\' (got \"" + c.name + "\")"});
  else if (control)
    e.push_back({"name", "must not contain control characters (tabs, newlines, escapes)"});
  else if (c.name == "." || c.name == ".." || c.name.front() == '.')
    e.push_back({"name", "must not start with '.' (got \"" + c.name + "\")"});
  if (c.name.size() > 100)
    e.push_back({"name", "must be at most 100 characters (got " + std::to_string(c.name.size()) + ")"});

  // The task's loss and figures.
  const auto& t = c.task;
  const bool regression = t.kind == "regression";
  const std::string& loss = c.loss.kind;
  const bool multilabel = t.kind == "multilabel";
  if (multilabel && loss != "auto" && loss != "bce")
    e.push_back({"loss.kind", "\"" + loss +
                                  "\" does not fit task.kind multilabel, whose loss is bce (binary "
                                  "cross-entropy per label): set loss.kind to auto or bce"});
  if (!multilabel && loss == "bce")
    e.push_back({"loss.kind", "bce is the multi-label loss; task.kind is " + t.kind + ": use auto"});
  if (!multilabel && c.loss.pos_weight != "none")
    e.push_back({"loss.pos_weight", "weighs each label's positives; it applies to task.kind multilabel (got " + t.kind +
                                        "): set it to none, or use loss.class_weights"});
  if (const std::string why = classWeightsProblem(c.loss.pos_weight); !why.empty())
    e.push_back({"loss.pos_weight", why});
  if (multilabel && t.tune_thresholds && c.data.val_fraction <= 0)
    e.push_back({"task.tune_thresholds",
                 "tunes the thresholds on the validation split: set data.val_fraction "
                 "(e.g. 0.2); tuning them on the test split would overstate the test figures"});
  if (!multilabel && t.tune_thresholds)
    e.push_back({"task.tune_thresholds", "tunes the labels' thresholds of task.kind multilabel (got " + t.kind + ")"});
  const bool folderTargets = c.data.format == "image_folder" && !c.data.targets_file.empty();
  if (multilabel && c.data.format != "csv" && !folderTargets)
    e.push_back({"task.kind",
                 "multilabel reads its labels from a table's columns: it needs data.format csv, or "
                 "image_folder with data.targets_file (got \"" +
                     c.data.format + "\")"});
  if (multilabel && c.data.tag_separator.empty() && c.data.target_columns.empty())
    e.push_back({"data.tag_separator", "must not be empty: it separates the tags of a multi-label row"});
  if (t.kind == "classification" && loss != "auto" && loss != "cross_entropy" && loss != "focal" && loss != "bce")
    e.push_back(
        {"loss.kind", "\"" + loss +
                          "\" does not fit task.kind classification, whose losses are "
                          "cross_entropy and focal: set loss.kind to auto, cross_entropy or focal, or task.kind to "
                          "regression"});
  if (regression && loss == "cross_entropy")
    e.push_back({"loss.kind",
                 "cross_entropy does not fit task.kind regression: use mse, l1, huber or smooth_l1 "
                 "(auto: mse)"});
  if (loss == "focal" && regression)
    e.push_back({"loss.kind", "focal does not fit task.kind regression: use mse, l1, huber or smooth_l1"});
  if (const std::string why = classWeightsProblem(c.loss.class_weights); !why.empty())
    e.push_back({"loss.class_weights", why});
  if (t.kind != "classification" && c.loss.class_weights != "none")
    e.push_back({"loss.class_weights", "weigh the classes of task.kind classification (got " + t.kind + ")" +
                                           (multilabel ? ": use loss.pos_weight" : ": set it to none")});
  if (t.kind != "classification" && c.loss.label_smoothing > 0)
    e.push_back({"loss.label_smoothing",
                 "smooths the class targets of task.kind classification (got " + t.kind + "): set it to 0"});
  if (loss == "focal" && c.loss.label_smoothing > 0)
    e.push_back({"loss.label_smoothing", "applies to cross_entropy, not to loss.kind focal: set it to 0"});
  if (t.kind != "classification" && c.data.sampler == "balanced")
    e.push_back({"data.sampler", "balanced draws every class equally often; task.kind " + t.kind +
                                     " has no single class per example: use shuffle"});
  if (regression && c.data.format != "csv" && !folderTargets)
    e.push_back({"task.kind",
                 "regression reads its targets from a table's columns: it needs data.format csv, or "
                 "image_folder with data.targets_file (got \"" +
                     c.data.format + "\")"});
  if (const std::string why = metricTaskProblem(c.train.early_stopping.metric, t.kind); !why.empty())
    e.push_back({"train.early_stopping.metric", why});

  const auto& d = c.data;
  if (d.format == "csv") {
    if (d.root.empty() && d.train_file.empty())
      e.push_back({"data.root", "must name the table file (a .csv), or set data.train_file"});
    if (c.model.kind == "cnn" || c.model.kind == "resnet" || isTorchvisionBackbone(c.model.kind))
      e.push_back({"model.kind",
                   "must be mlp or torchscript with data.format csv: a table has no image for "
                   "\"" +
                       c.model.kind + "\" to convolve"});
    if (d.augment_flip) e.push_back({"data.augment_flip", "applies to images; data.format csv is a table"});
    if (d.augment_crop > 0) e.push_back({"data.augment_crop", "applies to images; data.format csv is a table"});
    if (d.augment_resized_crop)
      e.push_back({"data.augment_resized_crop", "applies to images; data.format csv is a table"});
  } else if (d.root.empty()) {
    e.push_back({"data.root", "must name a folder"});
  }
  if (d.format == "image_folder") {
    if (d.image_size.size() != 2) {
      e.push_back({"data.image_size", "must be [height, width] (got " + json(d.image_size).dump() + ")"});
    } else {
      const bool autoSize = d.image_size[0] == 0 && d.image_size[1] == 0;
      const bool ok = autoSize || (d.image_size[0] >= 1 && d.image_size[0] <= 4096 && d.image_size[1] >= 1 &&
                                   d.image_size[1] <= 4096);
      if (!ok)
        e.push_back({"data.image_size", "must be two sizes from 1 to 4096, or [0, 0] for the first image's size (got " +
                                            json(d.image_size).dump() + ")"});
    }
    if (d.channels == 2) e.push_back({"data.channels", "must be 0 (as the first image), 1 or 3 (got 2)"});
    if (d.stored_size != 0 && d.image_size.size() == 2 && d.image_size[0] > 0 && d.image_size[1] > 0 &&
        d.stored_size < std::min(d.image_size[0], d.image_size[1]))
      e.push_back({"data.stored_size", "must be 0 (auto) or at least the image size's shorter side, " +
                                           std::to_string(std::min(d.image_size[0], d.image_size[1])) + " (got " +
                                           std::to_string(d.stored_size) + ")"});
  }
  if (c.model.kind == "torchscript" && c.model.path.empty())
    e.push_back({"model.path", "must name the TorchScript file (saved in Python with torch.jit.save)"});

  if (c.train.epochs == 0 && c.train.max_steps == 0)
    e.push_back({"train.epochs", "must be > 0 when train.max_steps is 0 (got 0)"});
  const auto& o = c.optimizer;
  if (o.kind == "sgd" && o.nesterov && o.momentum <= 0)
    e.push_back({"optimizer.nesterov", "needs optimizer.momentum > 0 (got " + num(o.momentum) + ")"});
  const auto& s = c.schedule;
  if (s.warmup_steps > 0 && (s.kind == "onecycle" || s.kind == "cyclic"))
    e.push_back({"schedule.warmup_steps", "must be 0 with schedule.kind \"" + s.kind +
                                              "\", which warms up by itself (got " + std::to_string(s.warmup_steps) +
                                              ")"});
  if ((s.kind == "onecycle" && s.onecycle.cycle_momentum) || (s.kind == "cyclic" && s.cyclic.cycle_momentum)) {
    if (o.kind == "sgd" && o.momentum <= 0)
      e.push_back(
          {"schedule." + s.kind + ".cycle_momentum", "needs optimizer.momentum > 0 with sgd, or set it to false"});
  }
  const auto& p = c.performance;
  bool deviceOk = p.device == "auto" || p.device == "cpu" || p.device == "cuda";
  if (!deviceOk && p.device.rfind("cuda:", 0) == 0 && p.device.size() > 5 && p.device.size() < 9) {
    deviceOk = p.device.find_first_not_of("0123456789", 5) == std::string::npos;
  }
  if (!deviceOk) e.push_back({"performance.device", "must be auto, cpu, cuda or cuda:N (got \"" + p.device + "\")"});
  if (p.cuda_graphs == "on" && p.device == "cpu")
    e.push_back({"performance.cuda_graphs", "is on, but performance.device is cpu: CUDA graphs need a CUDA GPU"});
  if (c.memory.activation_checkpointing != "off" && c.model.kind == "torchscript")
    e.push_back({"memory.activation_checkpointing",
                 "works on the built-in models (mlp, cnn, resnet), not on a TorchScript model: its layers "
                 "cannot be split into recomputed segments; set it to off"});
  if (c.memory.activation_checkpointing != "off" && isTorchvisionBackbone(c.model.kind))
    e.push_back({"memory.activation_checkpointing",
                 "works on the built-in models (mlp, cnn, resnet), not yet on torchvision's " + c.model.kind +
                     "; set it to off"});
  if (!c.model.weights.empty() && isTorchvisionBackbone(c.model.kind) && c.model.weights.rfind("http", 0) == 0)
    e.push_back({"model.weights", "must be a file on this machine (got \"" + c.model.weights +
                                      "\"): download torchvision's file first, e.g. with torchvision's "
                                      "models." +
                                      c.model.kind +
                                      "(weights=\"DEFAULT\") in Python, which keeps it "
                                      "under ~/.cache/torch/hub/checkpoints/"});
  {
    const auto list = processDevices(c.distributed.devices);
    std::set<std::string> seen;
    bool cpu = false, gpu = false;
    for (const auto& d : list) {
      const bool index = !d.empty() && d.size() <= 3 && std::all_of(d.begin(), d.end(), ::isdigit);
      if (d == "cpu")
        cpu = true;
      else if (index)
        gpu = true;
      if ((d != "cpu" && !index) || (index && !seen.insert(d).second)) {
        e.push_back({"distributed.devices",
                     "must list GPU indices once each (\"0,1\") or cpu per process "
                     "(\"cpu,cpu\"), separated by commas (got \"" +
                         c.distributed.devices + "\")"});
        break;
      }
    }
    if (cpu && gpu)
      e.push_back({"distributed.devices",
                   "lists both GPUs and cpu; one run uses one kind (got \"" + c.distributed.devices + "\")"});
  }
  if (c.distributed.batchnorm == "sync" && c.model.kind == "torchscript")
    e.push_back({"distributed.batchnorm",
                 "sync works on the built-in models (cnn, resnet), whose BatchNorm layers the studio runs; a "
                 "TorchScript model's are its own: set it to local"});
  if (d.augment_policy != "none" && d.format == "csv")
    e.push_back({"data.augment_policy", "applies to images; data.format csv is a table"});
  if (d.augment_policy == "randaugment" && d.augment_policy_magnitude >= d.augment_policy_bins)
    e.push_back({"data.augment_policy_magnitude", "must be below data.augment_policy_bins, " +
                                                      std::to_string(d.augment_policy_bins) + " (got " +
                                                      std::to_string(d.augment_policy_magnitude) + ")"});
  if (d.augment_resized_crop && d.format != "csv") {
    if (d.augment_crop_scale_min > d.augment_crop_scale_max)
      e.push_back({"data.augment_crop_scale_min", "must not exceed data.augment_crop_scale_max (got " +
                                                      num(d.augment_crop_scale_min) + " > " +
                                                      num(d.augment_crop_scale_max) + ")"});
    if (d.augment_crop_ratio_min > d.augment_crop_ratio_max)
      e.push_back({"data.augment_crop_ratio_min", "must not exceed data.augment_crop_ratio_max (got " +
                                                      num(d.augment_crop_ratio_min) + " > " +
                                                      num(d.augment_crop_ratio_max) + ")"});
  }
  if ((d.augment_mixup || d.augment_cutmix) && c.task.kind != "classification")
    e.push_back({d.augment_mixup ? "data.augment_mixup" : "data.augment_cutmix",
                 "mixes one-hot class targets; task.kind is " + c.task.kind});
  if (d.augment_cutmix && d.format == "csv")
    e.push_back({"data.augment_cutmix", "cuts rectangles of images; data.format csv is a table (MixUp mixes rows)"});
  if ((d.augment_mixup || d.augment_cutmix) && c.loss.kind == "focal")
    e.push_back({"loss.kind",
                 "focal takes one class per example; MixUp and CutMix give mixed targets: use "
                 "cross_entropy (or auto)"});
  const auto& f = c.train.finetune;
  if (f.freeze_epochs > 0 && processDevices(c.distributed.devices).size() > 1)
    e.push_back({"train.finetune.freeze_epochs",
                 "freezes layers, which a run of several processes cannot yet do (their gradients are exchanged "
                 "in fixed buckets); set it to 0 or train in one process"});
  if (f.freeze_epochs > 0 && c.performance.cuda_graphs == "on")
    e.push_back({"train.finetune.freeze_epochs",
                 "unfreezes layers during the run, which a recorded CUDA graph "
                 "cannot follow: set performance.cuda_graphs to auto or off"});
  if (c.output.dir.empty()) e.push_back({"output.dir", "must name a folder"});
  return e;
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
  std::ifstream in(path);
  if (!in) throw ConfigFileError("cannot open settings file " + path);
  json j;
  try {
    j = json::parse(in);
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
  std::string data = c.data.format == "idx"            ? c.data.dataset
                     : c.data.format == "image_folder" ? stem(c.data.root)
                                                       : stem(c.data.root.empty() ? c.data.train_file : c.data.root);
  const std::string model = c.model.kind == "torchscript" ? stem(c.model.path) : c.model.kind;
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
