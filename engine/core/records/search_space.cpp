#include "studio/search_space.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/metric_catalog.h"
#include "studio/metric_record.h"
#include "studio/settings_schema.h"

namespace studio {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream in(s);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

double number(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw ConfigFileError(where + ": \"" + text + "\" is not a number");
}

// The shortest text that reads back as the same double.
std::string formatNumber(double v, bool whole) {
  if (whole) return std::to_string(static_cast<long long>(v));
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The first error of these settings, or "".
std::string firstError(const TrainConfig& c) {
  const auto errors = validate(c);
  return errors.empty() ? "" : errors.front().text();
}

// A value of the param on the base settings: "" when valid, else why not.
std::string checkValue(const TrainConfig& base, const std::string& key, const std::string& value) {
  TrainConfig c = base;
  try {
    applyOverride(c, key + "=" + value);
  } catch (const std::exception& e) {
    return e.what();
  }
  return firstError(c);
}

}  // namespace

std::vector<std::string> SearchParam::gridValues() const {
  if (kind == Kind::Choice || pow2) return choices;
  if (kind == Kind::Float || high - low > 1000) return {};
  std::vector<std::string> v;
  for (int64_t i = static_cast<int64_t>(low); i <= static_cast<int64_t>(high); ++i) v.push_back(std::to_string(i));
  return v;
}

std::string SearchParam::describe() const {
  if (kind == Kind::Choice || pow2) {
    std::string s;
    for (const auto& c : choices) s += (s.empty() ? "" : ", ") + c;
    return s;
  }
  const bool whole = kind == Kind::Int;
  return formatNumber(low, whole) + " .. " + formatNumber(high, whole) + (log ? " (log)" : "");
}

std::string searchParamText(const SearchParam& p) {
  if (p.kind == SearchParam::Kind::Choice) {
    std::string s = p.key + "=choice:";
    for (size_t i = 0; i < p.choices.size(); ++i) s += (i ? "," : "") + p.choices[i];
    return s;
  }
  const bool whole = p.kind == SearchParam::Kind::Int;
  std::string s =
      p.key + (whole ? "=int:" : "=float:") + formatNumber(p.low, whole) + ":" + formatNumber(p.high, whole);
  if (p.log) s += ":log";
  if (p.pow2) s += ":pow2";
  return s;
}

SearchParam parseSearchParam(const std::string& text) {
  const std::string where = "--space " + text;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigFileError(where + ": give key=float:LOW:HIGH[:log], key=int:LOW:HIGH[:log|pow2] or key=choice:A,B,...");
  SearchParam p;
  p.key = trim(text.substr(0, eq));
  const std::string rest = text.substr(eq + 1);
  const FieldSpec* field = findSetting(p.key);
  if (!field)
    throw ConfigFileError(where + ": " + p.key +
                          " is not a setting (`training-studio-cli summary` and the "
                          "window's form name them)");
  if (!settingSearchable(*field))
    throw ConfigFileError(where + ": " + p.key +
                          " is not searched: a search samples numbers, choices and switches, not a name, a path, "
                          "a size or a list (set it with --set)");
  const auto colon = rest.find(':');
  const std::string kind = trim(rest.substr(0, colon));
  const std::string args = colon == std::string::npos ? "" : rest.substr(colon + 1);
  if (kind == "choice") {
    p.kind = SearchParam::Kind::Choice;
    std::set<std::string> seen;
    for (const auto& c : split(args, ',')) {
      const std::string v = trim(c);
      if (v.empty()) throw ConfigFileError(where + ": an empty choice");
      if (!seen.insert(v).second) throw ConfigFileError(where + ": the choice " + v + " is given twice");
      p.choices.push_back(v);
    }
    if (p.choices.size() < 2)
      throw ConfigFileError(where + ": a choice needs two values or more (one value: --set " + p.key + "=...)");
    return p;
  }
  if (kind != "float" && kind != "int")
    throw ConfigFileError(where + ": the kind \"" + kind + "\" is not float, int or choice");
  const bool whole = kind == "int";
  p.kind = whole ? SearchParam::Kind::Int : SearchParam::Kind::Float;
  if (whole && field->type != FieldType::Int)
    throw ConfigFileError(where + ": " + p.key + " is not a whole number; use float: or choice:");
  if (!whole && field->type != FieldType::Real)
    throw ConfigFileError(where + ": " + p.key + " is not a real number" +
                          (field->type == FieldType::Int ? "; use int:" : "; use choice:"));
  const auto parts = split(args, ':');
  if (parts.size() < 2 || parts.size() > 3) throw ConfigFileError(where + ": give " + kind + ":LOW:HIGH[:log]");
  p.low = number(trim(parts[0]), where + " low");
  p.high = number(trim(parts[1]), where + " high");
  if (whole && (p.low != std::floor(p.low) || p.high != std::floor(p.high)))
    throw ConfigFileError(where + ": int bounds must be whole numbers");
  // A whole number past 2^53 is no longer exact as the double the bounds are
  // kept in (and past 2^63 no integer at all): said as given, never wrapped.
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (whole && (std::fabs(p.low) > kExact || std::fabs(p.high) > kExact))
    throw ConfigFileError(where + ": the bounds " + trim(parts[0]) + " and " + trim(parts[1]) +
                          " must lie within ±9007199254740992 (2^53)");
  if (parts.size() == 3) {
    const std::string flag = trim(parts[2]);
    if (flag == "log")
      p.log = true;
    else if (flag == "pow2" && whole)
      p.pow2 = true;
    else
      throw ConfigFileError(where + ": \"" + flag + "\" is not " + (whole ? "log or pow2" : "log"));
  }
  if (!(p.low < p.high))
    throw ConfigFileError(where + ": the low bound " + formatNumber(p.low, whole) + " is not below the high bound " +
                          formatNumber(p.high, whole));
  if ((p.log || p.pow2) && p.low <= 0)
    throw ConfigFileError(where + ": a " + (p.log ? "log" : "pow2") + " range needs bounds above 0 (low is " +
                          formatNumber(p.low, whole) + ")");
  if (p.pow2) {
    for (int64_t v = 1; v <= static_cast<int64_t>(p.high); v *= 2)
      if (v >= p.low) p.choices.push_back(std::to_string(v));
    if (p.choices.size() < 2)
      throw ConfigFileError(where + ": fewer than two powers of two lie between " + formatNumber(p.low, true) +
                            " and " + formatNumber(p.high, true));
  }
  return p;
}

std::vector<std::string> searchMetrics() {
  std::vector<std::string> m;
  for (const auto& spec : metricCatalog())
    if (spec.kind == RecordKind::Eval) m.emplace_back(spec.id);
  return m;
}

std::string metricDirection(const std::string& metric) {
  // The catalog's judgement: an error (RMSE, MAE, ECE) is minimised like a
  // loss (it was maximised: only ids with "loss" were minimised, issue 57).
  return lowerIsBetter(metric) ? "minimize" : "maximize";
}

TrainConfig trialConfig(const SearchSpec& spec, const std::vector<std::string>& assignments) {
  TrainConfig c = spec.base;
  for (const auto& a : spec.trialSettings) applyOverride(c, a);
  for (const auto& a : assignments) applyOverride(c, a);
  return c;
}

namespace {

// A query key of a storage URL, %-decoded and lower-cased ("PassWord" and
// "pass%77ord" are libpq's and SQLAlchemy's password too).
std::string queryKey(const std::string& raw) {
  std::string key;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '%' && i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
      key += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      key += raw[i] == '+' ? ' ' : raw[i];
    }
  }
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  return key;
}

// A secret's key: libpq's password, sslpassword and passfile (which names
// a file of passwords to read: PGPASSFILE says it outside the URL).
bool secretKey(const std::string& key) {
  return key.find("password") != std::string::npos || key.find("passfile") != std::string::npos ||
         key.find("passwd") != std::string::npos || key == "pwd";
}

// A URL query's parameters ("a=1&password=x" -> "a=1", "password=x").
std::vector<std::string> queryParams(const std::string& query) {
  std::vector<std::string> params;
  std::stringstream in(query);
  for (std::string param; std::getline(in, param, '&');) params.push_back(param);
  return params;
}

}  // namespace

std::string redactedStorageUrl(const std::string& url) {
  std::string out = url;
  const auto scheme = out.find("://");
  const size_t from = scheme == std::string::npos ? 0 : scheme + 3;
  const auto query = out.find('?', from);
  const auto at = out.rfind('@', query == std::string::npos ? std::string::npos : query);
  if (at != std::string::npos && at >= from) {
    const auto colon = out.find(':', from);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  const auto q = out.find('?', from);
  if (q == std::string::npos) return out;
  std::string rebuilt = out.substr(0, q + 1);
  bool first = true;
  for (const std::string& param : queryParams(out.substr(q + 1))) {
    const auto eq = param.find('=');
    const std::string key = param.substr(0, eq);
    rebuilt += (first ? "" : "&") + (secretKey(queryKey(key)) && eq != std::string::npos ? key + "=***" : param);
    first = false;
  }
  return rebuilt;
}

void checkStorageUrl(const std::string& url) {
  // Every message names the URL without its secrets (issue 59, item 1).
  const std::string shown = redactedStorageUrl(url);
  const auto scheme = url.find("://");
  const std::string kind = scheme == std::string::npos ? "" : url.substr(0, scheme);
  if (kind != "postgresql" && kind != "mysql")
    throw ConfigFileError(
        "--storage " + shown +
        ": give a database URL, postgresql://USER@HOST[:PORT]/DATABASE or mysql://USER@HOST/DATABASE");
  const std::string rest = url.substr(scheme + 3);
  const auto queryAt = rest.find('?');
  const std::string place = rest.substr(0, queryAt);
  const auto at = place.rfind('@');
  const std::string secretWhere =
      ", which would be written to the study's search.json and logs; give postgresql://USER@HOST/DATABASE and "
      "the password in PGPASSWORD or ~/.pgpass (MYSQL_PWD for MySQL)";
  if (at != std::string::npos && place.substr(0, at).find(':') != std::string::npos)
    throw ConfigFileError("--storage " + shown + ": the URL holds a password (USER:PASSWORD@)" + secretWhere);
  if (queryAt != std::string::npos) {
    for (const std::string& param : queryParams(rest.substr(queryAt + 1))) {
      const std::string key = queryKey(param.substr(0, param.find('=')));
      if (secretKey(key))
        throw ConfigFileError("--storage " + shown + ": the URL's query holds " + key +
                              (key.find("passfile") != std::string::npos
                                   ? ", a file of passwords; name it in PGPASSFILE instead, outside the URL"
                                   : ", a password" + secretWhere));
    }
  }
  if (place.find('/') == std::string::npos || place.back() == '/')
    throw ConfigFileError("--storage " + shown +
                          ": name the database after the host (postgresql://USER@HOST/DATABASE)");
}

void checkSearch(SearchSpec& spec) {
  if (!spec.storage.empty()) checkStorageUrl(spec.storage);
  std::vector<std::string> problems;
  auto bad = [&](const std::string& s) { problems.push_back(s); };
  TrainConfig trialBase = spec.base;
  try {
    for (const auto& a : spec.trialSettings) applyOverride(trialBase, a);
    if (const std::string e = firstError(trialBase); !e.empty()) bad("--trial-set: " + e);
  } catch (const std::exception& e) {
    bad(std::string("--trial-set: ") + e.what());
  }
  if (spec.name.empty() || spec.name.size() > 90 || spec.name.front() == '.' ||
      spec.name.find_first_of("/\\\t\n\r") != std::string::npos)
    bad("--name \"" +
        (spec.name.size() > 60 ? spec.name.substr(0, 40) + "\"... (" + std::to_string(spec.name.size()) + " characters)"
                               : spec.name + "\"") +
        ": a study's name is 1-90 characters, no '/' or '\\', not starting with '.'");
  if (spec.space.empty()) bad("--space: give at least one setting to search");
  std::set<std::string> keys;
  for (const auto& p : spec.space) {
    if (!keys.insert(p.key).second) bad("--space " + p.key + " is given twice");
    const std::string text = "--space " + searchParamText(p);
    const bool whole = p.kind == SearchParam::Kind::Int;
    const std::vector<std::string> values =
        !p.choices.empty() ? p.choices
                           : std::vector<std::string>{formatNumber(p.low, whole), formatNumber(p.high, whole)};
    for (const auto& v : values)
      if (const std::string e = checkValue(trialBase, p.key, v); !e.empty())
        bad(text + ": the value " + v + " is not valid: " + e);
    if (spec.sampler == "grid" && p.gridValues().empty())
      bad(text + ": the grid sampler needs values; give choice:A,B,... or an int range of at most 1000 values");
  }
  const auto metrics = searchMetrics();
  if (std::find(metrics.begin(), metrics.end(), spec.metric) == metrics.end()) {
    std::string known;
    for (const auto& m : metrics) known += (known.empty() ? "" : ", ") + m;
    bad("--metric " + spec.metric + " is not what a run's evaluations record (they record: " + known + ")");
  } else if (spec.metric.rfind("ema_", 0) == 0 && trialBase.train.ema.decay <= 0 && !keys.count("train.ema.decay")) {
    bad("--metric " + spec.metric + " is recorded only with a weight average: set train.ema.decay (e.g. 0.999)");
  } else if (const std::string why = metricTaskProblem(spec.metric, trialBase.task.kind); !why.empty()) {
    bad("--metric " + why);  // before any trial trains, not after each one
  }
  if (spec.direction.empty() && std::find(metrics.begin(), metrics.end(), spec.metric) != metrics.end())
    spec.direction = metricDirection(spec.metric);
  if (spec.direction != "maximize" && spec.direction != "minimize")
    bad("--direction " + spec.direction + " is not maximize or minimize");
  if (spec.trials < 1) bad("--trials " + std::to_string(spec.trials) + ": give 1 or more");
  if (spec.parallel < 1) bad("--parallel " + std::to_string(spec.parallel) + ": give 1 or more trials at once");
  auto known = [](const std::string& v, const auto& list) {
    return std::find(std::begin(list), std::end(list), v) != std::end(list);
  };
  if (!known(spec.sampler, kSearchSamplers)) bad("--sampler " + spec.sampler + " is not tpe, random or grid");
  if (!known(spec.pruner, kSearchPruners))
    bad("--pruner " + spec.pruner + " is not hyperband, halving, median or none");
  for (const auto& line : spec.enqueued) {
    std::vector<std::string> assignments;
    for (const auto& a : split(line, ' ')) {
      if (trim(a).empty()) continue;
      const auto eq = a.find('=');
      const std::string key = a.substr(0, eq);
      if (eq == std::string::npos || !keys.count(key)) {
        bad("--enqueue \"" + line + "\": " + a + " is not key=value of a --space setting");
        continue;
      }
      assignments.push_back(a);
    }
    try {
      if (const std::string e = firstError(trialConfig(spec, assignments)); !e.empty())
        bad("--enqueue \"" + line + "\": " + e);
    } catch (const std::exception& e) {
      bad("--enqueue \"" + line + "\": " + e.what());
    }
  }
  if (!problems.empty()) {
    std::string text = "the search cannot start:";
    for (const auto& p : problems) text += "\n  " + p;
    throw ConfigFileError(text);
  }
}

std::vector<std::string> searchWarnings(const SearchSpec& spec) {
  std::vector<std::string> notes;
  TrainConfig c;
  try {
    c = trialConfig(spec, {});
  } catch (const std::exception&) {
    return notes;  // checkSearch says why
  }
  for (const auto& p : spec.space)
    if (const std::string note = settingEffectNote(p.key, c); !note.empty())
      notes.push_back("--space " + p.key + " " + note);
  if (!spec.trialSettings.empty())
    for (const auto& w : settingsWithoutEffect(c, spec.trialSettings))
      notes.push_back("--trial-set " + w.field + " " + w.message);
  return notes;
}

std::string searchFolder(const SearchSpec& spec) {
  return (std::filesystem::path(spec.base.output.dir) / ("search-" + spec.name)).string();
}

nlohmann::json searchSpecJson(const SearchSpec& spec) {
  nlohmann::json space = nlohmann::json::array();
  for (const auto& p : spec.space) {
    nlohmann::json j{{"key", p.key}, {"text", searchParamText(p)}};
    const FieldSpec* field = findSetting(p.key);
    // Values typed as the setting is, so that Optuna and its dashboard show numbers as numbers.
    const bool numeric =
        field && (field->type == FieldType::Int || field->type == FieldType::Real || field->type == FieldType::Bool);
    const auto typed = [numeric](const std::vector<std::string>& texts) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& t : texts) {
        const auto v = nlohmann::json::parse(t, nullptr, false);
        values.push_back(numeric && !v.is_discarded() ? v : nlohmann::json(t));
      }
      return values;
    };
    // The grid sampler's values, as gridValues gives them (none for a float range).
    if (const auto grid = p.gridValues(); !grid.empty()) j["grid"] = typed(grid);
    if (!p.choices.empty()) {
      j["kind"] = "choice";
      j["choices"] = typed(p.choices);
    } else {
      j["kind"] = p.kind == SearchParam::Kind::Int ? "int" : "float";
      j["low"] = p.low;
      j["high"] = p.high;
      j["log"] = p.log;
    }
    space.push_back(j);
  }
  nlohmann::json out{{"format", 1},
                     {"name", spec.name},
                     {"base", toJson(spec.base)},
                     {"space", space},
                     {"trial_settings", spec.trialSettings},
                     {"enqueued", spec.enqueued},
                     {"metric", spec.metric},
                     {"direction", spec.direction},
                     {"trials", spec.trials},
                     {"sampler", spec.sampler},
                     {"pruner", spec.pruner},
                     {"parallel", spec.parallel},
                     {"seed", spec.seed},
                     {"metrics_header", metricsCsvHeader()}};
  if (!spec.storage.empty()) out["storage"] = spec.storage;  // a study's own study.db: no key, as before
  return out;
}

SearchSpec searchSpecFromJson(const nlohmann::json& j, const std::string& file) {
  try {
    SearchSpec s;
    s.name = j.at("name").get<std::string>();
    std::vector<ConfigError> errors;
    s.base = configFromJson(j.at("base"), errors);
    if (!errors.empty()) throw ConfigFileError(file + ": base: " + errors.front().text());
    for (const auto& p : j.at("space")) s.space.push_back(parseSearchParam(p.at("text").get<std::string>()));
    s.trialSettings = j.at("trial_settings").get<std::vector<std::string>>();
    s.enqueued = j.value("enqueued", std::vector<std::string>{});
    s.metric = j.at("metric").get<std::string>();
    s.direction = j.at("direction").get<std::string>();
    s.trials = j.at("trials").get<int>();
    s.sampler = j.at("sampler").get<std::string>();
    s.pruner = j.at("pruner").get<std::string>();
    s.parallel = j.at("parallel").get<int>();
    s.seed = j.at("seed").get<int64_t>();
    s.storage = j.value("storage", std::string());
    return s;
  } catch (const ConfigFileError&) {
    throw;
  } catch (const std::exception& e) {
    // nlohmann's "[json.exception.out_of_range.403] key 'metric' not found": the words, without the code.
    std::string why = e.what();
    if (why.rfind("[json.exception.", 0) == 0 && why.find("] ") != std::string::npos)
      why = why.substr(why.find("] ") + 2);
    throw ConfigFileError(file + " is not a study's search.json as training-studio-cli search writes it (" + why +
                          "); was it edited? Start a new search, or put the file back");
  }
}

}  // namespace studio
