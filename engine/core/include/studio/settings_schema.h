#pragma once
// Every setting described once: where it sits in the form, its label, a
// one-line tip saying what it does and when it helps, the editor it needs,
// its choices or range, when it applies, and the struct member that holds it
// (whose initializer is its default, as LibTorch's options keep theirs).
// Reading and writing settings JSON (train_config.cpp) and validate() walk
// these specs (cross-field rules are a short list beside it); the window
// builds its form from them. A new setting is its member in the struct and
// one entry here: no edit in the reader, the writer or ui/. Torch-free.
// Thread: immutable data, any thread.

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "studio/train_config.h"

namespace studio {

enum class FieldType {
  Text,      // free text
  Folder,    // a folder path (the form offers a folder picker)
  File,      // a file path (a file picker)
  DataPath,  // data.root, data.annotations: a folder or a file (picksFile says which the picker opens on)
  Int,
  Real,
  Bool,
  Choice,    // one of `choices`
  Size,      // [height, width] ("64x64" in the form; [0, 0]: "auto")
  TextList,  // a list of names ("a, b" in the form)
};

// lo..hi with open or closed ends; hi = inf: no upper bound.
struct NumberRange {
  double lo = 0;
  double hi = std::numeric_limits<double>::infinity();
  bool loOpen = false;
  bool hiOpen = false;
  bool contains(double v) const;
  // "must be > 0", "must be in [0, 1)"
  std::string rule() const;
};

// The member of TrainConfig that holds a setting (a choice's, whatever its
// enum, as its ChoiceValue).
using FieldRef = std::variant<std::string*, bool*, int*, int64_t*, uint64_t*, double*, std::vector<int64_t>*,
                              std::vector<std::string>*, ChoiceValue*>;

struct FieldSpec {
  std::string path;  // dotted, as in settings.json and validation messages: "optimizer.lr"
  // The member in a config (the same dotted path in C++: c.optimizer.lr).
  std::function<FieldRef(TrainConfig&)> member;
  std::string group;  // the form's section
  std::string label;
  FieldType type = FieldType::Text;
  std::string tip;
  // Choice only: a Choice<E> member's names (studio/choice.h), or a
  // registry's (model.kind, train.early_stopping.metric).
  std::vector<std::string> choices;
  std::optional<NumberRange> range;  // Int and Real
  // When the field matters for these settings (momentum with SGD, the chosen
  // schedule's own fields, the chosen data format's fields). Empty: always.
  std::function<bool(const TrainConfig&)> applies;
  // The same condition in words ("model.kind mlp, cnn or resnet"), for the
  // note on a field that is set where it does not apply; empty: none given.
  std::string appliesWhen;
  // Check range and choices only when the field applies (a schedule's own
  // fields); other fields are checked always.
  bool checkOnlyWhenApplies = false;
  // For DataPath: whether the picker should choose a file.
  std::function<bool(const TrainConfig&)> picksFile;
  // Why the field has no effect under these settings although it is set
  // (optimizer.lr under OneCycle), naming the setting that acts instead;
  // empty when it acts. Empty function: it always acts when it applies.
  std::function<std::string(const TrainConfig&)> noEffect;
  // Whether a fork may change it (settingForkable): false for what a
  // checkpoint's weights are bound to (the model, the data and its split,
  // task.kind, standardised targets); the augmentations, the loss, a
  // detector's post-processing and the training, optimizer, schedule and
  // output settings fork. Set where the field is added (schema_builder.h).
  bool forks = true;
  // A setting that acts on images only: set away from its default on a table
  // (data.format csv), validate() refuses it with these words. Empty: it
  // acts on any data (one rule for all twelve image augmentations).
  std::string imagesOnly;
};

// Every editable field in form order (schema_version is not editable).
const std::vector<FieldSpec>& settingsSchema();
// The form's sections in order.
const std::vector<std::string>& settingsGroups();
// nullptr when no field has this path.
const FieldSpec* findSetting(const std::string& path);
bool settingApplies(const FieldSpec& spec, const TrainConfig& config);
// Whether the setting holds another value than a fresh TrainConfig's.
bool settingDiffersFromDefault(const FieldSpec& spec, const TrainConfig& config);
// "has no effect under schedule.kind onecycle: schedule.onecycle.max_lr sets
// the rate ..." for a setting that these settings override, or "has no
// effect: it is read only with model.kind resnet18, ..." for one set away
// from its default where it does not apply (model.weights on an mlp); empty
// when it acts, or stays at its default (or no field has this path). The form shows it beside the field, the
// fork dialog beside a change, the CLI after --set.
std::string settingEffectNote(const std::string& path, const TrainConfig& config);
// Whether a fork may change this setting (dotted path): its FieldSpec's
// `forks`; false for a path that is no setting. The fork dialog offers, and
// the engine's fork accepts, exactly these.
bool settingForkable(const std::string& path);
// Whether a search may sample this setting: a number, a choice or a switch
// (not a path, a name, a size or a list). The window's search dialog offers,
// and the CLI's --space accepts, exactly these.
bool settingSearchable(const FieldSpec& spec);
// The setting that sets a run's (peak) learning rate under its schedule:
// schedule.onecycle.max_lr, schedule.cyclic.max_lr, else optimizer.lr.
std::string learningRateSetting(const TrainConfig& config);
// The notes of these settings as warnings with their field: dotted paths,
// or "key=value" assignments as --set and a fork's changes give them (the
// key is the path); an empty list: every field.
std::vector<ConfigError> settingsWithoutEffect(const TrainConfig& config,
                                               const std::vector<std::string>& settings = {});

// "optimizer.lr" -> "/optimizer/lr"
std::string jsonPointer(const std::string& dottedPath);

}  // namespace studio
