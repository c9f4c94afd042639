#pragma once
// Building the settings schema: one field at a time, each call's setters
// filling in the rest (settings_schema.cpp, and its parts beside it).
// Thread: the schema is built once, on first use.

#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "studio/settings_schema.h"

namespace studio::schema {

using T = FieldType;
using Applies = std::function<bool(const TrainConfig&)>;
using Member = std::function<FieldRef(TrainConfig&)>;

// A setting's dotted path in settings.json is its member's path in the
// struct: one name gives both.
#define SETTING(path) #path, [](TrainConfig & c) -> FieldRef { return &c.path; }

inline NumberRange atLeast(double lo) { return {lo}; }
inline NumberRange above(double lo) { return {lo, std::numeric_limits<double>::infinity(), true}; }
inline NumberRange between(double lo, double hi, bool loOpen = false, bool hiOpen = false) {
  return {lo, hi, loOpen, hiOpen};
}

// Appends one field to the schema and returns it for the setters.
class Fields {
 public:
  explicit Fields(std::vector<FieldSpec>& fields) : m_fields(fields) {}
  // Whether the fields added from here on fork (FieldSpec::forks): each
  // section of the schema says so for its fields, forks() marks the
  // exceptions among them.
  bool forks = true;
  FieldSpec& operator()(std::string path, Member member, std::string group, std::string label, T type,
                        std::string tip) {
    FieldSpec s;
    s.path = std::move(path);
    s.member = std::move(member);
    s.group = std::move(group);
    s.label = std::move(label);
    s.type = type;
    s.tip = std::move(tip);
    s.forks = forks;
    static TrainConfig probe;  // only pointed into: a choice member's names
    const FieldRef ref = s.member(probe);
    if (const auto* choice = std::get_if<ChoiceValue*>(&ref)) s.choices = (*choice)->names();
    m_fields.push_back(std::move(s));
    return m_fields.back();
  }

 private:
  std::vector<FieldSpec>& m_fields;
};

inline FieldSpec& choices(FieldSpec& s, std::vector<std::string> c) {
  s.choices = std::move(c);
  return s;
}
inline FieldSpec& range(FieldSpec& s, NumberRange r) {
  s.range = r;
  return s;
}
// A setting a fork may change although its section's may not (a detector's
// post-processing).
inline FieldSpec& forks(FieldSpec& s) {
  s.forks = true;
  return s;
}
// A setting that acts on images only: validate() refuses it, set, on a table.
inline FieldSpec& imagesOnly(FieldSpec& s, std::string why = "applies to images; data.format csv is a table") {
  s.imagesOnly = std::move(why);
  return s;
}
inline FieldSpec& when(FieldSpec& s, Applies a, bool checkOnlyThen = false) {
  s.applies = std::move(a);
  s.checkOnlyWhenApplies = checkOnlyThen;
  return s;
}
// A condition with its words, for the note on a setting set where it does not apply.
struct Rule {
  Applies test;
  std::string words;  // "data.format csv"
  bool operator()(const TrainConfig& c) const { return test(c); }
};
inline FieldSpec& when(FieldSpec& s, const Rule& r, bool checkOnlyThen = false) {
  s.appliesWhen = r.words;
  return when(s, r.test, checkOnlyThen);
}

// The image augmentations, in the Data group (settings_schema_augment.cpp).
void addAugmentSettings(Fields& add);
// Object detection's data and detector settings (settings_schema_detection.cpp).
void addDetectionSettings(Fields& add);
void addSegmentationSettings(Fields& add);
// How a run trains: the groups from Training to Output (settings_schema_run.cpp).
void addRunSettings(Fields& add);

}  // namespace studio::schema
