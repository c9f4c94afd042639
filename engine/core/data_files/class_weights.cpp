#include "studio/class_weights.h"

#include <charconv>
#include <cmath>
#include <numeric>

#include "studio/errors.h"

namespace studio {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Above this a weight makes the float32 loss overflow (1e300 becomes inf) or
// drown every other class: the first step would fail and blame the rate.
constexpr double kMaxWeight = 1e6;

// The list's numbers; false when a part is not a positive number of at most kMaxWeight.
bool parseList(const std::string& text, std::vector<double>& out) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string part = trimmed(text.substr(start, end - start));
    double v = 0;
    const auto [at, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || at != part.data() + part.size() || !std::isfinite(v) || v <= 0 ||
        v > kMaxWeight)
      return false;
    out.push_back(v);
    start = end + 1;
  }
  return !out.empty();
}

}  // namespace

std::string classWeightsProblem(const std::string& text) {
  const std::string t = trimmed(text);
  std::vector<double> list;
  if (t == "none" || t == "balanced" || parseList(t, list)) return "";
  return "must be none, balanced, or one positive number per class separated by commas, each at most 1000000 "
         "(got \"" +
         (text.size() > 200 ? text.substr(0, 200) + "…" : text) + "\")";
}

namespace {

// A list of one weight per class or label, checked.
std::vector<double> listOf(const std::string& setting, const std::string& text, const std::vector<std::string>& names,
                           const char* what) {
  std::vector<double> list;
  if (!parseList(trimmed(text), list)) throw InputError(setting + " " + classWeightsProblem(text));
  if (list.size() != names.size()) {
    std::string known;
    for (size_t c = 0; c < names.size() && c < 12; ++c) known += (c ? ", " : "") + names[c];
    if (names.size() > 12) known += ", ...";
    throw InputError(setting + " has " + std::to_string(list.size()) + " weight(s); the data has " +
                     std::to_string(names.size()) + " " + what + " (" + known + "): give one weight per " +
                     (std::string(what) == "classes" ? "class" : "label") + ", in that order");
  }
  return list;
}

}  // namespace

std::vector<double> positiveWeights(const std::string& text, const std::vector<int64_t>& positives, int64_t examples,
                                    const std::vector<std::string>& names) {
  const std::string t = trimmed(text);
  if (t == "none") return {};
  if (t != "balanced") return listOf("loss.pos_weight", text, names, "labels");
  std::vector<double> w;
  for (size_t k = 0; k < positives.size(); ++k) {
    if (positives[k] == 0)
      throw InputError("loss.pos_weight balanced: label \"" + (k < names.size() ? names[k] : std::to_string(k)) +
                       "\" has no positive training example; give the weights as a list");
    w.push_back(static_cast<double>(examples - positives[k]) / static_cast<double>(positives[k]));
  }
  return w;
}

std::vector<double> classWeights(const std::string& text, const std::vector<int64_t>& counts,
                                 const std::vector<std::string>& names) {
  const std::string t = trimmed(text);
  if (t == "none") return {};
  const auto classes = counts.size();
  if (t == "balanced") {
    const auto total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), int64_t{0}));
    std::vector<double> w;
    for (size_t c = 0; c < classes; ++c) {
      if (counts[c] == 0)
        throw InputError("loss.class_weights balanced: class \"" + (c < names.size() ? names[c] : std::to_string(c)) +
                         "\" has no training examples, so it has no frequency to weigh by; give the weights as a list");
      w.push_back(total / (static_cast<double>(classes) * static_cast<double>(counts[c])));
    }
    return w;
  }
  return listOf("loss.class_weights", text, names, "classes");
}

}  // namespace studio
