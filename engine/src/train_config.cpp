#include "studio/train_config.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"

namespace studio {
namespace {

using nlohmann::json;

// One description of the struct serves writing and strict reading, so the two
// can never disagree about a key.
template <class V>
void describe(V& v, TrainConfig& c) {
  v.field("schema_version", c.schema_version);
  v.field("name", c.name);
  v.section("model", [&] {
    v.field("kind", c.model.kind);
    v.field("width", c.model.width);
    v.field("depth", c.model.depth);
    v.field("dropout", c.model.dropout);
  });
  v.section("data", [&] {
    v.field("dataset", c.data.dataset);
    v.field("root", c.data.root);
    v.field("train_limit", c.data.train_limit);
    v.field("test_limit", c.data.test_limit);
    v.field("val_fraction", c.data.val_fraction);
    v.field("normalize", c.data.normalize);
    v.field("augment_flip", c.data.augment_flip);
    v.field("augment_crop", c.data.augment_crop);
  });
  v.section("train", [&] {
    v.field("epochs", c.train.epochs);
    v.field("max_steps", c.train.max_steps);
    v.field("batch_size", c.train.batch_size);
    v.field("accumulation_steps", c.train.accumulation_steps);
    v.field("grad_clip_norm", c.train.grad_clip_norm);
    v.field("seed", c.train.seed);
    v.field("log_every_steps", c.train.log_every_steps);
  });
  v.section("optimizer", [&] {
    v.field("kind", c.optimizer.kind);
    v.field("lr", c.optimizer.lr);
    v.field("weight_decay", c.optimizer.weight_decay);
    v.field("momentum", c.optimizer.momentum);
    v.field("nesterov", c.optimizer.nesterov);
    v.field("beta1", c.optimizer.beta1);
    v.field("beta2", c.optimizer.beta2);
    v.field("eps", c.optimizer.eps);
  });
  v.section("schedule", [&] {
    auto& s = c.schedule;
    v.field("kind", s.kind);
    v.field("warmup_steps", s.warmup_steps);
    v.field("warmup_start_factor", s.warmup_start_factor);
    v.section("step", [&] {
      v.field("step_size", s.step.step_size);
      v.field("gamma", s.step.gamma);
    });
    v.section("cosine", [&] {
      v.field("t_max", s.cosine.t_max);
      v.field("eta_min", s.cosine.eta_min);
    });
    v.section("linear", [&] {
      v.field("start_factor", s.linear.start_factor);
      v.field("end_factor", s.linear.end_factor);
      v.field("total_iters", s.linear.total_iters);
    });
    v.section("onecycle", [&] {
      auto& o = s.onecycle;
      v.field("max_lr", o.max_lr);
      v.field("total_steps", o.total_steps);
      v.field("pct_start", o.pct_start);
      v.field("anneal", o.anneal);
      v.field("div_factor", o.div_factor);
      v.field("final_div_factor", o.final_div_factor);
      v.field("three_phase", o.three_phase);
      v.field("cycle_momentum", o.cycle_momentum);
      v.field("base_momentum", o.base_momentum);
      v.field("max_momentum", o.max_momentum);
    });
    v.section("cyclic", [&] {
      auto& y = s.cyclic;
      v.field("base_lr", y.base_lr);
      v.field("max_lr", y.max_lr);
      v.field("step_size_up", y.step_size_up);
      v.field("step_size_down", y.step_size_down);
      v.field("mode", y.mode);
      v.field("gamma", y.gamma);
      v.field("cycle_momentum", y.cycle_momentum);
      v.field("base_momentum", y.base_momentum);
      v.field("max_momentum", y.max_momentum);
    });
  });
  v.section("precision", [&] {
    v.field("mode", c.precision.mode);
    v.section("loss_scale", [&] {
      auto& l = c.precision.loss_scale;
      v.field("init_scale", l.init_scale);
      v.field("growth_factor", l.growth_factor);
      v.field("backoff_factor", l.backoff_factor);
      v.field("growth_interval", l.growth_interval);
    });
  });
  v.section("performance", [&] {
    auto& p = c.performance;
    v.field("device", p.device);
    v.field("cudnn_benchmark", p.cudnn_benchmark);
    v.field("tf32", p.tf32);
    v.field("channels_last", p.channels_last);
    v.field("zero_grad_to_none", p.zero_grad_to_none);
    v.field("threads", p.threads);
  });
  v.section("loader", [&] {
    v.field("mode", c.loader.mode);
    v.field("workers", c.loader.workers);
    v.field("prefetch", c.loader.prefetch);
    v.field("pin_memory", c.loader.pin_memory);
  });
  v.section("evaluation", [&] {
    v.field("every_steps", c.evaluation.every_steps);
    v.field("batch_size", c.evaluation.batch_size);
  });
  v.section("output", [&] {
    v.field("dir", c.output.dir);
    v.field("checkpoint_every_steps", c.output.checkpoint_every_steps);
    v.field("save_best", c.output.save_best);
  });
}

struct Writer {
  std::vector<json*> stack;
  template <class T> void field(const char* key, T& value) { (*stack.back())[key] = value; }
  void section(const char* key, const std::function<void()>& body) {
    json& child = (*stack.back())[key] = json::object();
    stack.push_back(&child);
    body();
    stack.pop_back();
  }
};


struct Reader {
  std::vector<const json*> stack;
  std::vector<std::string> path;
  std::vector<std::set<std::string>> seen;
  std::vector<ConfigError>& errors;

  std::string pathOf(const char* key) const {
    std::string p;
    for (const auto& part : path) p += part + ".";
    return p + key;
  }
  const json* find(const char* key) {
    seen.back().insert(key);
    const json& obj = *stack.back();
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  void read(const char* key, std::string& out) {
    if (const json* j = find(key)) {
      if (j->is_string()) out = j->get<std::string>();
      else errors.push_back({pathOf(key), "must be a string (got " + j->dump() + ")"});
    }
  }
  void read(const char* key, bool& out) {
    if (const json* j = find(key)) {
      if (j->is_boolean()) out = j->get<bool>();
      else errors.push_back({pathOf(key), "must be true or false (got " + j->dump() + ")"});
    }
  }
  void read(const char* key, double& out) {
    if (const json* j = find(key)) {
      if (j->is_number()) out = j->get<double>();
      else errors.push_back({pathOf(key), "must be a number (got " + j->dump() + ")"});
    }
  }
  template <class I> void readInteger(const char* key, I& out) {
    if (const json* j = find(key)) {
      bool whole = j->is_number_integer() ||
                   (j->is_number_float() && std::floor(j->get<double>()) == j->get<double>());
      if (!whole) {
        errors.push_back({pathOf(key), "must be a whole number (got " + j->dump() + ")"});
      } else if (std::is_unsigned_v<I> && j->is_number_integer() && !j->is_number_unsigned() &&
                 j->get<int64_t>() < 0) {
        errors.push_back({pathOf(key), "must be >= 0 (got " + j->dump() + ")"});
      } else {
        out = static_cast<I>(j->is_number_float() ? static_cast<int64_t>(j->get<double>())
                                                  : j->get<int64_t>());
      }
    }
  }
  void read(const char* key, int& out) { readInteger(key, out); }
  void read(const char* key, int64_t& out) { readInteger(key, out); }
  void read(const char* key, uint64_t& out) { readInteger(key, out); }

  template <class T> void field(const char* key, T& value) { read(key, value); }

  void section(const char* key, const std::function<void()>& body) {
    const json* j = find(key);
    if (!j) return;
    if (!j->is_object()) {
      errors.push_back({pathOf(key), "must be an object (got " + j->dump() + ")"});
      return;
    }
    enter(*j);
    path.push_back(key);
    body();
    leave();
    path.pop_back();
  }
  void enter(const json& j) {
    stack.push_back(&j);
    seen.emplace_back();
  }
  void leave() {
    for (auto it = stack.back()->begin(); it != stack.back()->end(); ++it)
      if (!seen.back().count(it.key()))
        errors.push_back({pathOf(it.key().c_str()), "is not a known setting"});
    stack.pop_back();
    seen.pop_back();
  }
};

std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

bool oneOf(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed)
    if (v == a) return true;
  return false;
}

std::string listOf(std::initializer_list<const char*> allowed) {
  std::string s;
  for (const char* a : allowed) s += (s.empty() ? "" : ", ") + std::string(a);
  return s;
}

}  // namespace

std::vector<ConfigError> validate(const TrainConfig& c) {
  std::vector<ConfigError> e;
  auto positive = [&](const std::string& f, double v) {
    if (!(v > 0)) e.push_back({f, "must be > 0 (got " + num(v) + ")"});
  };
  auto nonNegative = [&](const std::string& f, double v) {
    if (!(v >= 0)) e.push_back({f, "must be >= 0 (got " + num(v) + ")"});
  };
  auto range = [&](const std::string& f, double v, double lo, double hi, bool hiOpen) {
    if (!(v >= lo && (hiOpen ? v < hi : v <= hi)))
      e.push_back({f, "must be in [" + num(lo) + ", " + num(hi) + (hiOpen ? ")" : "]") +
                          " (got " + num(v) + ")"});
  };
  auto choice = [&](const std::string& f, const std::string& v, std::initializer_list<const char*> a) {
    if (!oneOf(v, a)) e.push_back({f, "must be one of " + listOf(a) + " (got \"" + v + "\")"});
  };

  if (c.schema_version != kConfigSchemaVersion)
    e.push_back({"schema_version", "must be " + std::to_string(kConfigSchemaVersion) + " (got " +
                                       std::to_string(c.schema_version) + ")"});
  if (c.name.empty()) e.push_back({"name", "must not be empty"});
  for (char ch : c.name)
    if (ch == '/' || ch == '\\' || ch == '\0') {
      e.push_back({"name", "must not contain '/' or '\\' (got \"" + c.name + "\")"});
      break;
    }

  choice("model.kind", c.model.kind, {"mlp", "cnn", "resnet"});
  range("model.width", c.model.width, 1, 4096, false);
  range("model.depth", c.model.depth, 1, 64, false);
  range("model.dropout", c.model.dropout, 0, 1, true);

  choice("data.dataset", c.data.dataset, {"fashion-mnist", "mnist"});
  if (c.data.root.empty()) e.push_back({"data.root", "must name a folder"});
  nonNegative("data.train_limit", static_cast<double>(c.data.train_limit));
  nonNegative("data.test_limit", static_cast<double>(c.data.test_limit));
  range("data.val_fraction", c.data.val_fraction, 0, 0.9, false);
  range("data.augment_crop", c.data.augment_crop, 0, 8, false);

  nonNegative("train.epochs", c.train.epochs);
  nonNegative("train.max_steps", static_cast<double>(c.train.max_steps));
  if (c.train.epochs == 0 && c.train.max_steps == 0)
    e.push_back({"train.epochs", "must be > 0 when train.max_steps is 0 (got 0)"});
  range("train.batch_size", c.train.batch_size, 1, 1 << 20, false);
  range("train.accumulation_steps", c.train.accumulation_steps, 1, 4096, false);
  nonNegative("train.grad_clip_norm", c.train.grad_clip_norm);
  range("train.log_every_steps", c.train.log_every_steps, 1, 100000, false);

  const auto& o = c.optimizer;
  choice("optimizer.kind", o.kind, {"sgd", "adam", "adamw"});
  positive("optimizer.lr", o.lr);
  nonNegative("optimizer.weight_decay", o.weight_decay);
  range("optimizer.momentum", o.momentum, 0, 1, true);
  if (o.kind == "sgd" && o.nesterov && o.momentum <= 0)
    e.push_back({"optimizer.nesterov", "needs optimizer.momentum > 0 (got " + num(o.momentum) + ")"});
  range("optimizer.beta1", o.beta1, 0, 1, true);
  range("optimizer.beta2", o.beta2, 0, 1, true);
  positive("optimizer.eps", o.eps);

  const auto& s = c.schedule;
  choice("schedule.kind", s.kind, {"constant", "step", "cosine", "linear", "onecycle", "cyclic"});
  nonNegative("schedule.warmup_steps", static_cast<double>(s.warmup_steps));
  range("schedule.warmup_start_factor", s.warmup_start_factor, 0, 1, false);
  if (s.warmup_steps > 0 && (s.kind == "onecycle" || s.kind == "cyclic"))
    e.push_back({"schedule.warmup_steps", "must be 0 with schedule.kind \"" + s.kind +
                                              "\", which warms up by itself (got " +
                                              std::to_string(s.warmup_steps) + ")"});
  if (s.kind == "step") {
    positive("schedule.step.step_size", static_cast<double>(s.step.step_size));
    positive("schedule.step.gamma", s.step.gamma);
  }
  if (s.kind == "cosine") {
    nonNegative("schedule.cosine.t_max", static_cast<double>(s.cosine.t_max));
    nonNegative("schedule.cosine.eta_min", s.cosine.eta_min);
  }
  if (s.kind == "linear") {
    range("schedule.linear.start_factor", s.linear.start_factor, 0, 1, false);
    if (s.linear.start_factor == 0)
      e.push_back({"schedule.linear.start_factor", "must be > 0 (got 0)"});
    range("schedule.linear.end_factor", s.linear.end_factor, 0, 1, false);
    positive("schedule.linear.total_iters", static_cast<double>(s.linear.total_iters));
  }
  if (s.kind == "onecycle") {
    const auto& y = s.onecycle;
    positive("schedule.onecycle.max_lr", y.max_lr);
    nonNegative("schedule.onecycle.total_steps", static_cast<double>(y.total_steps));
    range("schedule.onecycle.pct_start", y.pct_start, 0, 1, false);
    choice("schedule.onecycle.anneal", y.anneal, {"cos", "linear"});
    positive("schedule.onecycle.div_factor", y.div_factor);
    positive("schedule.onecycle.final_div_factor", y.final_div_factor);
    range("schedule.onecycle.base_momentum", y.base_momentum, 0, 1, true);
    range("schedule.onecycle.max_momentum", y.max_momentum, 0, 1, true);
  }
  if (s.kind == "cyclic") {
    const auto& y = s.cyclic;
    positive("schedule.cyclic.base_lr", y.base_lr);
    positive("schedule.cyclic.max_lr", y.max_lr);
    positive("schedule.cyclic.step_size_up", static_cast<double>(y.step_size_up));
    nonNegative("schedule.cyclic.step_size_down", static_cast<double>(y.step_size_down));
    choice("schedule.cyclic.mode", y.mode, {"triangular", "triangular2", "exp_range"});
    range("schedule.cyclic.gamma", y.gamma, 0, 1, false);
    if (y.gamma == 0) e.push_back({"schedule.cyclic.gamma", "must be > 0 (got 0)"});
    range("schedule.cyclic.base_momentum", y.base_momentum, 0, 1, true);
    range("schedule.cyclic.max_momentum", y.max_momentum, 0, 1, true);
  }
  if ((s.kind == "onecycle" && s.onecycle.cycle_momentum) ||
      (s.kind == "cyclic" && s.cyclic.cycle_momentum)) {
    if (o.kind == "sgd" && o.momentum <= 0)
      e.push_back({"schedule." + s.kind + ".cycle_momentum",
                   "needs optimizer.momentum > 0 with sgd, or set it to false"});
  }

  choice("precision.mode", c.precision.mode, {"fp32", "fp16", "bf16"});
  const auto& l = c.precision.loss_scale;
  positive("precision.loss_scale.init_scale", l.init_scale);
  if (!(l.growth_factor > 1))
    e.push_back({"precision.loss_scale.growth_factor", "must be > 1 (got " + num(l.growth_factor) + ")"});
  if (!(l.backoff_factor > 0 && l.backoff_factor < 1))
    e.push_back({"precision.loss_scale.backoff_factor",
                 "must be in (0, 1) (got " + num(l.backoff_factor) + ")"});
  range("precision.loss_scale.growth_interval", l.growth_interval, 1, 1 << 30, false);

  const auto& p = c.performance;
  bool deviceOk = p.device == "auto" || p.device == "cpu" || p.device == "cuda";
  if (!deviceOk && p.device.rfind("cuda:", 0) == 0 && p.device.size() > 5) {
    deviceOk = p.device.find_first_not_of("0123456789", 5) == std::string::npos;
  }
  if (!deviceOk)
    e.push_back({"performance.device", "must be auto, cpu, cuda or cuda:N (got \"" + p.device + "\")"});
  range("performance.threads", p.threads, 0, 1024, false);

  choice("loader.mode", c.loader.mode, {"auto", "device", "workers"});
  range("loader.workers", c.loader.workers, 0, 64, false);
  range("loader.prefetch", c.loader.prefetch, 1, 64, false);

  nonNegative("evaluation.every_steps", static_cast<double>(c.evaluation.every_steps));
  range("evaluation.batch_size", c.evaluation.batch_size, 1, 1 << 20, false);

  if (c.output.dir.empty()) e.push_back({"output.dir", "must name a folder"});
  nonNegative("output.checkpoint_every_steps", static_cast<double>(c.output.checkpoint_every_steps));
  return e;
}

nlohmann::json toJson(const TrainConfig& config) {
  json root = json::object();
  Writer w{{&root}};
  describe(w, const_cast<TrainConfig&>(config));  // Writer only reads
  return root;
}

TrainConfig configFromJson(const nlohmann::json& j, std::vector<ConfigError>& errors) {
  TrainConfig c;
  if (!j.is_object()) {
    errors.push_back({"", "settings must be a JSON object (got " + std::string(j.type_name()) + ")"});
    return c;
  }
  Reader r{{}, {}, {}, errors};
  r.enter(j);
  r.seen.back().insert("run_info");  // written by the engine beside the settings; informational
  describe(r, c);
  r.leave();
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
  if (eq == std::string::npos || eq == 0)
    throw ConfigFileError("--set expects key=value (got \"" + assignment + "\")");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::parse_error&) {
    value = text;
  }
  json root = toJson(config);
  json* node = &root;
  std::string rest = key;
  for (;;) {
    auto dot = rest.find('.');
    std::string part = rest.substr(0, dot);
    if (!node->is_object() || !node->contains(part))
      throw ConfigFileError(key + " is not a known setting");
    node = &(*node)[part];
    if (dot == std::string::npos) break;
    rest = rest.substr(dot + 1);
  }
  if (node->is_object()) throw ConfigFileError(key + " is a group of settings, not one setting");
  *node = value;
  std::vector<ConfigError> errors;
  TrainConfig updated = configFromJson(root, errors);
  if (!errors.empty()) throw ConfigFileError("--set " + assignment + ":" + joinErrors(errors));
  config = updated;
}

}  // namespace studio
