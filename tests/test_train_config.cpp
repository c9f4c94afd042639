// TrainConfig: validation names every bad field with its value, JSON round
// trips, unknown keys and wrong types are rejected, presets are valid.
#include <QtTest/QtTest>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "studio/model_kinds.h"
#include "studio/session.h"
#include "studio/settings_rules.h"
#include "studio/settings_schema.h"
#include "studio/train_config.h"

using namespace studio;

namespace {

bool hasError(const std::vector<ConfigError>& errors, const std::string& field, const std::string& part) {
  for (const auto& e : errors)
    if (e.field == field && e.text().find(part) != std::string::npos) return true;
  return false;
}

template <class C, class V>
concept ComparesWith = requires(const C& c, const V& v) {
  c == v;
};

std::string all(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.text() + "; ";
  return s;
}

}  // namespace

class TestTrainConfig : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultsAreValid() { QVERIFY2(validate(TrainConfig{}).empty(), all(validate(TrainConfig{})).c_str()); }

  void invalidFieldIsReported_data() {
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("message");
    QTest::newRow("lr negative") << "optimizer.lr=-1"
                                 << "optimizer.lr"
                                 << "optimizer.lr must be > 0 (got -1)";
    QTest::newRow("lr zero") << "optimizer.lr=0"
                             << "optimizer.lr"
                             << "must be > 0 (got 0)";
    QTest::newRow("optimizer kind") << "optimizer.kind=\"rmsprop\""
                                    << "optimizer.kind"
                                    << "(got \"rmsprop\")";
    QTest::newRow("momentum") << "optimizer.momentum=1.5"
                              << "optimizer.momentum"
                              << "(got 1.5)";
    QTest::newRow("beta2") << "optimizer.beta2=1"
                           << "optimizer.beta2"
                           << "must be in [0, 1)";
    QTest::newRow("eps") << "optimizer.eps=0"
                         << "optimizer.eps"
                         << "must be > 0";
    QTest::newRow("weight decay") << "optimizer.weight_decay=-0.1"
                                  << "optimizer.weight_decay"
                                  << "(got -0.1)";
    QTest::newRow("model kind") << "model.kind=\"vit\""
                                << "model.kind"
                                << "must be one of mlp, cnn, resnet";
    QTest::newRow("model width") << "model.width=0"
                                 << "model.width"
                                 << "(got 0)";
    QTest::newRow("dropout") << "model.dropout=1"
                             << "model.dropout"
                             << "(got 1)";
    QTest::newRow("batch size") << "train.batch_size=0"
                                << "train.batch_size"
                                << "(got 0)";
    QTest::newRow("accumulation") << "train.accumulation_steps=0"
                                  << "train.accumulation_steps"
                                  << "(got 0)";
    QTest::newRow("clip") << "train.grad_clip_norm=-2"
                          << "train.grad_clip_norm"
                          << "(got -2)";
    QTest::newRow("epochs") << "train.epochs=-1"
                            << "train.epochs"
                            << "(got -1)";
    QTest::newRow("val fraction") << "data.val_fraction=0.95"
                                  << "data.val_fraction"
                                  << "(got 0.95)";
    QTest::newRow("crop") << "data.augment_crop=20"
                          << "data.augment_crop"
                          << "(got 20)";
    QTest::newRow("dataset") << "data.dataset=\"cifar\""
                             << "data.dataset"
                             << "(got \"cifar\")";
    QTest::newRow("schedule kind") << "schedule.kind=\"exp\""
                                   << "schedule.kind"
                                   << "(got \"exp\")";
    QTest::newRow("precision") << "precision.mode=\"fp8\""
                               << "precision.mode"
                               << "fp32, fp16, bf16";
    QTest::newRow("growth") << "precision.loss_scale.growth_factor=1"
                            << "precision.loss_scale.growth_factor"
                            << "must be > 1 (got 1)";
    QTest::newRow("backoff") << "precision.loss_scale.backoff_factor=1"
                             << "precision.loss_scale.backoff_factor"
                             << "(got 1)";
    QTest::newRow("device") << "performance.device=\"tpu\""
                            << "performance.device"
                            << "(got \"tpu\")";
    QTest::newRow("device index") << "performance.device=\"cuda:x\""
                                  << "performance.device"
                                  << "cuda:N";
    QTest::newRow("loader mode") << "loader.mode=\"magic\""
                                 << "loader.mode"
                                 << "(got \"magic\")";
    QTest::newRow("prefetch") << "loader.prefetch=0"
                              << "loader.prefetch"
                              << "(got 0)";
    QTest::newRow("eval batch") << "evaluation.batch_size=0"
                                << "evaluation.batch_size"
                                << "(got 0)";
    QTest::newRow("output dir") << "output.dir=\"\""
                                << "output.dir"
                                << "must name a folder";
    QTest::newRow("name slash") << "name=\"a/b\""
                                << "name"
                                << "must not contain";
    QTest::newRow("name dot-dot") << "name=\"..\""
                                  << "name"
                                  << "must not start with '.'";
    QTest::newRow("name control") << "name=\"a\\u001b[31mb\""
                                  << "name"
                                  << "must not contain control characters";
    QTest::newRow("name 300 chars") << ("name=\"" + QString(300, 'x') + "\"") << "name"
                                    << "at most 100 characters (got 300)";
    QTest::newRow("lr 1e400") << "optimizer.lr=1e400"
                              << "optimizer.lr"
                              << "must be a finite number";
    QTest::newRow("schema") << "schema_version=7"
                            << "schema_version"
                            << "must be 2 (got 7)";
    QTest::newRow("data format") << "data.format=\"parquet\""
                                 << "data.format"
                                 << "must be one of idx, image_folder, csv (got \"parquet\")";
    QTest::newRow("model kind torchscript needs a path") << "model.kind=\"torchscript\""
                                                         << "model.path"
                                                         << "must name the TorchScript file";
    // Past the member's type, the setting's own range is quoted (not int's).
    QTest::newRow("width beyond int") << "model.width=4294967328"
                                      << "model.width"
                                      << "must be in [1, 4096] (got 4294967328)";
    QTest::newRow("epochs 1e300") << "train.epochs=1e300"
                                  << "train.epochs"
                                  << "must be in [0, 1000000] (got 1e+300)";
    QTest::newRow("max_steps beyond a plan") << "train.max_steps=1000000001"
                                             << "train.max_steps"
                                             << "must be in [0, 1000000000] (got 1000000001)";
    QTest::newRow("seed negative") << "train.seed=-1"
                                   << "train.seed"
                                   << "must be >= 0 (got -1)";
  }
  void invalidFieldIsReported() {
    QFETCH(QString, assignment);
    QFETCH(QString, field);
    QFETCH(QString, message);
    // applyOverride reads types (and whole numbers' ranges); validate() judges values.
    TrainConfig c;
    std::vector<ConfigError> errors;
    try {
      applyOverride(c, assignment.toStdString());
      errors = validate(c);
    } catch (const ConfigFileError& e) {
      errors.push_back({"", e.what()});
      QVERIFY2(std::string(e.what()).find(field.toStdString()) != std::string::npos, e.what());
    }
    QVERIFY2(
        hasError(errors, "", message.toStdString()) || hasError(errors, field.toStdString(), message.toStdString()),
        all(errors).c_str());
  }

  // Issue 57, item 5: every image augmentation set on a table is one error
  // with the same words (five were errors, seven only notes), and at its
  // default none is.
  void everyImageAugmentationOnATableIsRefused() {
    TrainConfig c;
    c.model.kind = "mlp";
    c.data.format = DataFormat::csv;
    c.data.root = "/data/table.csv";
    QVERIFY2(validate(c).empty(), all(validate(c)).c_str());
    auto& d = c.data;
    d.augment_flip = d.augment_resized_crop = d.augment_vflip = true;
    d.augment_crop = 2;
    d.augment_rotation = 10;
    d.augment_brightness = d.augment_contrast = d.augment_saturation = d.augment_hue = 0.1;
    d.augment_erasing = 0.25;
    d.augment_policy = AugmentPolicy::trivialaugment;
    d.augment_cutmix = true;
    const auto errors = validate(c);
    int refused = 0;
    for (const FieldSpec& f : settingsSchema()) {
      if (f.imagesOnly.empty()) continue;
      ++refused;
      QVERIFY2(hasError(errors, f.path,
                        f.path == "data.augment_cutmix" ? "cuts rectangles of images"
                                                        : "applies to images; data.format csv"),
               (f.path + ": " + all(errors)).c_str());
      QVERIFY2(settingEffectNote(f.path, c).empty(), f.path.c_str());
    }
    QCOMPARE(refused, 12);
  }

  void dataFormatRules() {
    TrainConfig c;
    c.data.format = DataFormat::csv;
    c.data.root = "";
    c.model.kind = "cnn";
    c.data.augment_flip = true;
    auto errors = validate(c);
    QVERIFY2(hasError(errors, "data.root", "must name the table file"), all(errors).c_str());
    QVERIFY2(hasError(errors, "model.kind", "must be mlp or torchscript with data.format csv"), all(errors).c_str());
    QVERIFY2(hasError(errors, "data.augment_flip", "applies to images"), all(errors).c_str());
    c = TrainConfig{};
    c.data.format = DataFormat::image_folder;
    c.data.image_size = {0, 5};
    c.data.channels = 2;
    c.data.test_fraction = 0.95;
    errors = validate(c);
    QVERIFY2(hasError(errors, "data.image_size", "(got [0,5])"), all(errors).c_str());
    QVERIFY2(hasError(errors, "data.channels", "must be 0 (as the first image), 1 or 3 (got 2)"), all(errors).c_str());
    QVERIFY2(hasError(errors, "data.test_fraction", "must be in [0, 0.9] (got 0.95)"), all(errors).c_str());
    // The format's own fields are checked only with that format.
    c = TrainConfig{};
    c.data.test_fraction = 0.95;
    c.data.on_bad_file.setName("ignore");
    QVERIFY2(validate(c).empty(), all(validate(c)).c_str());
    c.data.format = DataFormat::image_folder;
    QVERIFY(hasError(validate(c), "data.on_bad_file", "(got \"ignore\")"));
  }

  void schemaDescribesEveryField() {
    // Each setting in the JSON has exactly one spec, with a label and a tip.
    std::vector<std::string> paths;
    std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& j,
                                                                              const std::string& prefix) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object())
          walk(*it, path);
        else if (path != "schema_version")
          paths.push_back(path);
      }
    };
    walk(toJson(TrainConfig{}), "");
    QCOMPARE(settingsSchema().size(), paths.size());
    for (const auto& p : paths) {
      const FieldSpec* spec = findSetting(p);
      QVERIFY2(spec, p.c_str());
      QVERIFY2(!spec->label.empty() && !spec->tip.empty(), p.c_str());
      QVERIFY2(std::find(settingsGroups().begin(), settingsGroups().end(), spec->group) != settingsGroups().end(),
               p.c_str());
    }
  }

  // Each spec names its own member of the struct, of the type its editor
  // edits, and a value set there is written at the spec's path and nowhere
  // else, and read back into the same member.
  void eachSettingHasItsOwnMember() {
    std::set<const void*> members;
    const nlohmann::json defaults = toJson(TrainConfig{});
    for (const FieldSpec& spec : settingsSchema()) {
      TrainConfig c;
      const FieldRef ref = spec.member(c);
      QVERIFY2(members.insert(std::visit([](auto* m) { return static_cast<const void*>(m); }, ref)).second,
               spec.path.c_str());
      const bool typeFits = std::visit(
          [&](auto* m) {
            using M = std::remove_pointer_t<decltype(m)>;
            switch (spec.type) {
              case FieldType::Int:
                return std::is_integral_v<M> && !std::is_same_v<M, bool>;
              case FieldType::Real:
                return std::is_same_v<M, double>;
              case FieldType::Bool:
                return std::is_same_v<M, bool>;
              case FieldType::Size:
                return std::is_same_v<M, std::vector<int64_t>>;
              case FieldType::TextList:
                return std::is_same_v<M, std::vector<std::string>>;
              case FieldType::Choice:  // an enum's Choice, or a registry's names
                return std::is_same_v<M, ChoiceValue> || std::is_same_v<M, std::string>;
              default:
                return std::is_same_v<M, std::string>;
            }
          },
          ref);
      QVERIFY2(typeFits, spec.path.c_str());
      // Another value than the default, set through the member.
      std::visit(
          [](auto* m) {
            using M = std::remove_pointer_t<decltype(m)>;
            if constexpr (std::is_same_v<M, bool>)
              *m = !*m;
            else if constexpr (std::is_arithmetic_v<M>)
              *m = *m + 3;
            else if constexpr (std::is_same_v<M, std::string>)
              *m += "-x";
            else if constexpr (std::is_same_v<M, std::vector<int64_t>>)
              *m = {7, 9};
            else if constexpr (std::is_same_v<M, ChoiceValue>)
              m->setName(m->names().at(m->names().front() == m->name() ? 1 : 0));
            else
              *m = {"a", "b"};
          },
          ref);
      const nlohmann::json written = toJson(c);
      const auto diff = nlohmann::json::diff(defaults, written);
      QVERIFY2(!diff.empty(), spec.path.c_str());
      for (const auto& op : diff)
        QVERIFY2(op["path"].get<std::string>().rfind(jsonPointer(spec.path), 0) == 0,
                 (spec.path + ": " + diff.dump()).c_str());
      std::vector<ConfigError> errors;
      const TrainConfig back = configFromJson(written, errors);
      QVERIFY2(errors.empty(), all(errors).c_str());
      QCOMPARE(toJson(back), written);
    }
  }

  // A choice setting holds its enum (studio/choice.h): every name of the
  // form's list reads into the enumerator of the same place, writes back as
  // itself, and an unknown name is kept for validate() to name, nowhere
  // acted on. Comparing a choice with a string does not compile.
  void choicesAreTheirEnums() {
    static_assert(!ComparesWith<Choice<OptimizerKind>, const char*>);
    static_assert(!ComparesWith<Choice<TaskKind>, std::string>);
    static_assert(ComparesWith<Choice<OptimizerKind>, OptimizerKind>);
    QCOMPARE(nameOf(LossKind::auto_), std::string("auto"));
    QCOMPARE(nameOf(IdxDataset::fashion_mnist), std::string("fashion-mnist"));
    int choiceFields = 0;
    for (const FieldSpec& spec : settingsSchema()) {
      TrainConfig probe;
      const FieldRef ref = spec.member(probe);
      auto* const* choice = std::get_if<ChoiceValue*>(&ref);
      if (!choice) continue;
      ++choiceFields;
      QCOMPARE(spec.type, FieldType::Choice);
      QCOMPARE(spec.choices, (*choice)->names());
      for (const std::string& name : spec.choices) {
        nlohmann::json j = toJson(TrainConfig{});
        j[nlohmann::json::json_pointer(jsonPointer(spec.path))] = name;
        std::vector<ConfigError> errors;
        TrainConfig c = configFromJson(j, errors);
        QVERIFY2(errors.empty(), all(errors).c_str());
        const FieldRef read = spec.member(c);
        QCOMPARE((*std::get<ChoiceValue*>(read)).name(), name);
        QCOMPARE(toJson(c)[nlohmann::json::json_pointer(jsonPointer(spec.path))].get<std::string>(), name);
      }
    }
    QCOMPARE(choiceFields, 22);
    TrainConfig c;
    c.optimizer.kind.setName("adamw");
    QVERIFY(c.optimizer.kind == OptimizerKind::adamw);
    c.optimizer.kind.setName("adamx");
    QVERIFY(c.optimizer.kind != OptimizerKind::sgd && c.optimizer.kind != OptimizerKind::adam &&
            c.optimizer.kind != OptimizerKind::adamw);
    QCOMPARE(toJson(c)["optimizer"]["kind"].get<std::string>(), std::string("adamx"));
    QVERIFY2(hasError(validate(c), "optimizer.kind", "must be one of sgd, adam, adamw (got \"adamx\")"),
             all(validate(c)).c_str());
  }

  // model.kind's list is its registry's (studio/model_kinds.h): the
  // families by name, then torchvision's classifiers and detectors; each kind has its
  // family, and a name that is no model's has none.
  void modelKindsComeFromTheirRegistry() {
    QCOMPARE(findSetting("model.kind")->choices, modelKinds());
    QCOMPARE(modelKinds(), (std::vector<std::string>{"mlp",
                                                     "cnn",
                                                     "resnet",
                                                     "torchscript",
                                                     "resnet18",
                                                     "resnet34",
                                                     "resnet50",
                                                     "mobilenet_v3_small",
                                                     "mobilenet_v3_large",
                                                     "efficientnet_b0",
                                                     "fasterrcnn_mobilenet_v3_large_320_fpn",
                                                     "fasterrcnn_mobilenet_v3_large_fpn",
                                                     "fasterrcnn_resnet50_fpn_v2",
                                                     "retinanet_resnet50_fpn_v2",
                                                     "ssdlite320_mobilenet_v3_large",
                                                     "maskrcnn_resnet50_fpn_v2",
                                                     "lraspp_mobilenet_v3_large",
                                                     "deeplabv3_mobilenet_v3_large",
                                                     "deeplabv3_resnet50",
                                                     "fcn_resnet50"}));
    std::vector<std::string> builtin;
    for (const std::string& kind : modelKinds()) {
      QVERIFY2(modelFamily(kind).has_value(), kind.c_str());
      QCOMPARE(*modelFamily(kind) == ModelFamily::torchvision, isTorchvisionBackbone(kind));
      QCOMPARE(*modelFamily(kind) == ModelFamily::detector,
               std::ranges::count(detectorKinds(), kind) + std::ranges::count(maskDetectorKinds(), kind) == 1);
      QCOMPARE(*modelFamily(kind) == ModelFamily::segmenter,
               std::find(segmenterKinds().begin(), segmenterKinds().end(), kind) != segmenterKinds().end());
      if (isBuiltinModel(kind)) builtin.push_back(kind);
    }
    QCOMPARE(builtin, (std::vector<std::string>{"mlp", "cnn", "resnet"}));
    QVERIFY(isModel("torchscript", ModelFamily::torchscript));
    QVERIFY(!modelFamily("torchvision").has_value());  // a family, not a model
    QVERIFY(!modelFamily("detector").has_value());
    QVERIFY(!modelFamily("segmenter").has_value());
    QVERIFY(!modelFamily("vgg16").has_value());
  }

  // Issue 57, item 3: a detector's traits come from one registry, and the
  // settings that apply to some families ask it: proposals for the two-stage
  // ones, min and max size for all but SSDlite, which resizes to 320 x 320.
  void detectorFamiliesComeFromTheirRegistry() {
    std::vector<std::string> kinds, twoStage, resized;
    for (const DetectorFamily& f : detectorFamilies()) {
      if (f.masks) {  // Mask R-CNN: instance segmentation's model.kind, not detection's
        QCOMPARE(modelFamily(f.kind), std::optional<ModelFamily>(ModelFamily::detector));
        QCOMPARE(maskDetectorKinds(), std::vector<std::string>{f.kind});
        continue;
      }
      kinds.push_back(f.kind);
      QCOMPARE(&detectorFamily(f.kind), findDetectorFamily(f.kind));
      QVERIFY2(!f.lossParts.empty(), f.kind.c_str());
      TrainConfig c;
      c.task.kind = TaskKind::detection;
      c.model.kind = f.kind;
      c.data.format = DataFormat::image_folder;
      c.model.detector.rois_per_image = 64;
      c.model.detector.min_size = 256;
      if (settingEffectNote("model.detector.rois_per_image", c).empty()) twoStage.push_back(f.kind);
      if (settingEffectNote("model.detector.min_size", c).empty()) resized.push_back(f.kind);
    }
    QCOMPARE(kinds, detectorKinds());
    QCOMPARE(twoStage, (std::vector<std::string>{"fasterrcnn_mobilenet_v3_large_320_fpn",
                                                 "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_resnet50_fpn_v2"}));
    QCOMPARE(resized,
             (std::vector<std::string>{"fasterrcnn_mobilenet_v3_large_320_fpn", "fasterrcnn_mobilenet_v3_large_fpn",
                                       "fasterrcnn_resnet50_fpn_v2", "retinanet_resnet50_fpn_v2"}));
    QVERIFY(detectorFamily("ssdlite320_mobilenet_v3_large").head == DetectorHead::SsdLite);
    QVERIFY(!detectorFamily("retinanet_resnet50_fpn_v2").twoStage());  // single-stage, as SSDlite is
    QVERIFY(!findDetectorFamily("resnet50"));
    try {
      detectorFamily("yolov8");
      QFAIL("a detector that is not one");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("model.kind yolov8 is not a detector: give one of fasterrcnn") !=
                   std::string::npos,
               e.what());
    }
  }

  // Every rule across settings (studio/settings_rules.h) has a case here
  // that breaks it and no other rule: the rule alone gives its message, the
  // defaults pass it, and validate() reports the same message.
  void eachRuleAcrossSettingsHasItsCase() {
    struct Case {
      const char* rule;
      std::function<void(TrainConfig&)> set;
      const char* field;
      const char* says;
    };
    auto table = [](TrainConfig& c) {
      c.data.format = DataFormat::csv;
      c.data.root = "/tmp/t.csv";
      c.model.kind = "mlp";
    };
    const std::vector<Case> cases{
        {"schema-version", [](TrainConfig& c) { c.schema_version = 7; }, "schema_version", "must be 2 (got 7)"},
        {"folder-name", [](TrainConfig& c) { c.name = "../up"; }, "name", "must not contain '/'"},
        {"multilabel-loss", [](TrainConfig& c) { c.loss.kind = LossKind::bce; }, "loss.kind",
         "bce is the multi-label loss; task.kind is classification"},
        {"positive-weights", [](TrainConfig& c) { c.loss.pos_weight = "balanced"; }, "loss.pos_weight",
         "applies to task.kind multilabel (got classification)"},
        {"tuned-thresholds", [](TrainConfig& c) { c.task.tune_thresholds = true; }, "task.tune_thresholds",
         "tunes the labels' thresholds of task.kind multilabel (got classification)"},
        {"multilabel-data", [](TrainConfig& c) { c.task.kind = TaskKind::multilabel; }, "task.kind",
         "multilabel reads its labels from a table's columns"},
        {"classification-loss", [](TrainConfig& c) { c.loss.kind = LossKind::huber; }, "loss.kind",
         "\"huber\" does not fit task.kind classification"},
        {"regression-loss",
         [&](TrainConfig& c) {
           table(c);
           c.task.kind = TaskKind::regression;
           c.loss.kind = LossKind::focal;
         },
         "loss.kind", "focal does not fit task.kind regression"},
        {"class-weights", [](TrainConfig& c) { c.loss.class_weights = "1, x"; }, "loss.class_weights", ""},
        {"label-smoothing",
         [](TrainConfig& c) {
           c.loss.kind = LossKind::focal;
           c.loss.label_smoothing = 0.1;
         },
         "loss.label_smoothing", "applies to cross_entropy, not to loss.kind focal"},
        {"balanced-sampler",
         [&](TrainConfig& c) {
           table(c);
           c.task.kind = TaskKind::regression;
           c.data.sampler = SamplerKind::balanced;
         },
         "data.sampler", "task.kind regression has no single class per example"},
        {"regression-data", [](TrainConfig& c) { c.task.kind = TaskKind::regression; }, "task.kind",
         "regression reads its targets from a table's columns"},
        {"early-stopping-metric", [](TrainConfig& c) { c.train.early_stopping.metric = "eval_r2"; },
         "train.early_stopping.metric", "eval_r2 is a regression figure"},
        {"data-root",
         [&](TrainConfig& c) {
           table(c);
           c.data.root = "";
         },
         "data.root", "must name the table file (a .csv), or set data.train_file"},
        {"images-only-on-a-table",
         [&](TrainConfig& c) {
           table(c);
           c.data.augment_flip = true;
         },
         "data.augment_flip", "applies to images; data.format csv is a table"},
        {"image-sizes",
         [](TrainConfig& c) {
           c.data.format = DataFormat::image_folder;
           c.data.channels = 2;
         },
         "data.channels", "must be 0 (as the first image), 1 or 3 (got 2)"},
        {"torchscript-file", [](TrainConfig& c) { c.model.kind = "torchscript"; }, "model.path",
         "must name the TorchScript file"},
        {"run-length",
         [](TrainConfig& c) {
           c.train.epochs = 0;
           c.train.max_steps = 0;
         },
         "train.epochs", "must be > 0 when train.max_steps is 0"},
        {"nesterov-momentum",
         [](TrainConfig& c) {
           c.optimizer.nesterov = true;
           c.optimizer.momentum = 0;
         },
         "optimizer.nesterov", "needs optimizer.momentum > 0 (got 0)"},
        {"schedule-warmup",
         [](TrainConfig& c) {
           c.schedule.kind = ScheduleKind::cyclic;
           c.schedule.warmup_steps = 5;
         },
         "schedule.warmup_steps", "must be 0 with schedule.kind \"cyclic\""},
        {"cycled-momentum",
         [](TrainConfig& c) {
           c.schedule.kind = ScheduleKind::onecycle;
           c.optimizer.momentum = 0;
         },
         "schedule.onecycle.cycle_momentum", "needs optimizer.momentum > 0 with sgd"},
        {"device-name", [](TrainConfig& c) { c.performance.device = "gpu"; }, "performance.device",
         "must be auto, cpu, cuda or cuda:N (got \"gpu\")"},
        {"checkpointed-models",
         [](TrainConfig& c) {
           c.model.kind = "resnet18";
           c.memory.activation_checkpointing = ActivationCheckpointing::every;
         },
         "memory.activation_checkpointing", "not yet on torchvision's resnet18"},
        {"local-weights",
         [](TrainConfig& c) {
           c.model.kind = "resnet18";
           c.model.weights = "https://download.pytorch.org/models/resnet18-f37072fd.pth";
         },
         "model.weights", "must be a file on this machine"},
        {"process-devices", [](TrainConfig& c) { c.distributed.devices = "0,cpu"; }, "distributed.devices",
         "lists both GPUs and cpu"},
        {"synced-batchnorm",
         [](TrainConfig& c) {
           c.model.kind = "torchscript";
           c.model.path = "/tmp/m.pt";
           c.distributed.batchnorm = BatchNormSync::sync;
         },
         "distributed.batchnorm", "sync works on the built-in models"},
        {"augment-policy",
         [](TrainConfig& c) {
           c.data.augment_policy = AugmentPolicy::randaugment;
           c.data.augment_policy_magnitude = 31;
         },
         "data.augment_policy_magnitude", "must be below data.augment_policy_bins, 31 (got 31)"},
        {"resized-crop-ranges",
         [](TrainConfig& c) {
           c.data.augment_resized_crop = true;
           c.data.augment_crop_ratio_min = 2;
           c.data.augment_crop_ratio_max = 1;
         },
         "data.augment_crop_ratio_min", "must not exceed data.augment_crop_ratio_max (got 2 > 1)"},
        {"mixed-targets",
         [](TrainConfig& c) {
           c.data.augment_mixup = true;
           c.loss.kind = LossKind::focal;
         },
         "loss.kind", "MixUp and CutMix give mixed targets"},
        {"frozen-layers",
         [](TrainConfig& c) {
           c.train.finetune.freeze_epochs = 1;
           c.performance.cuda_graphs = CudaGraphs::on;
         },
         "train.finetune.freeze_epochs", "which a recorded CUDA graph cannot follow"},
        {"output-folder", [](TrainConfig& c) { c.output.dir.clear(); }, "output.dir", "must name a folder"},
        {"cross-validation-fold",
         [](TrainConfig& c) {
           c.data.cv_folds = 5;
           c.data.cv_fold = 6;
         },
         "data.cv_fold", "must be a fold from 1 to data.cv_folds (5), got 6"},
        {"annotated-data",
         [](TrainConfig& c) {
           c.task.kind = TaskKind::detection;
           c.model.kind = "fasterrcnn_mobilenet_v3_large_320_fpn";
           c.data.format = DataFormat::image_folder;
         },
         "data.annotations", "task.kind detection needs the boxes"},
        {"detector-model", [](TrainConfig& c) { c.model.kind = "fasterrcnn_mobilenet_v3_large_fpn"; }, "model.kind",
         "finds boxes: set task.kind to detection"},
        {"segmenter-model", [](TrainConfig& c) { c.model.kind = "deeplabv3_resnet50"; }, "model.kind",
         "gives a class per pixel: set task.kind to segmentation"},
        {"annotated-steps",
         [](TrainConfig& c) {
           c.task.kind = TaskKind::segmentation;
           c.model.kind = "lraspp_mobilenet_v3_large";
           c.data.format = DataFormat::image_folder;
           c.performance.cuda_graphs = CudaGraphs::on;
         },
         "performance.cuda_graphs", "a segmenter's step resizes and crops each image"},
    };
    std::set<std::string> covered;
    for (const Case& k : cases) covered.insert(k.rule);
    for (const SettingsRule& rule : settingsRules()) {
      QVERIFY2(covered.count(rule.name), (std::string("no case breaks the rule ") + rule.name).c_str());
      Errors clean;
      rule.check(TrainConfig{}, clean);
      QVERIFY2(clean.empty(), (std::string(rule.name) + " fails the defaults: " + all(clean)).c_str());
    }
    QCOMPARE(covered.size(), settingsRules().size());
    for (const Case& k : cases) {
      const auto rule = std::find_if(settingsRules().begin(), settingsRules().end(),
                                     [&](const SettingsRule& r) { return k.rule == std::string(r.name); });
      QVERIFY2(rule != settingsRules().end(), k.rule);
      TrainConfig c;
      k.set(c);
      Errors alone;
      rule->check(c, alone);
      QVERIFY2(hasError(alone, k.field, k.says), (std::string(k.rule) + ": " + all(alone)).c_str());
      QVERIFY2(hasError(validate(c), k.field, k.says), (std::string(k.rule) + ": " + all(validate(c))).c_str());
      for (const SettingsRule& other : settingsRules()) {  // this case breaks this rule only
        if (&other == &*rule) continue;
        Errors more;
        other.check(c, more);
        QVERIFY2(more.empty(), (std::string(k.rule) + "'s case also breaks " + other.name + ": " + all(more)).c_str());
      }
    }
  }

  void textMustBeUtf8() {
    // Found by fuzz_settings: bytes that are not UTF-8 made writing the
    // settings (and the message about them) throw a library error.
    TrainConfig c;
    c.name = "run\xff\xfe";
    c.data.ignore_columns = {"ok", "bad\xc3"};
    const auto errors = validate(c);
    QVERIFY2(hasError(errors, "name", "must be UTF-8 text"), all(errors).c_str());
    QVERIFY2(hasError(errors, "data.ignore_columns", "must be UTF-8 text"), all(errors).c_str());
    applyOverride(c, "model.kind=\xff\xff");  // not JSON: taken as text, then judged
    QVERIFY(hasError(validate(c), "model.kind", "must be one of"));
  }

  void deeplyNestedValuesGiveShortMessages() {
    // 100,000 nested lists where a name belongs: an error, not a stack overflow.
    std::string text = "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/deep.json").toStdString();
    std::ofstream(path) << text;
    try {
      loadConfigFile(path);
      QFAIL("expected an error");
    } catch (const ConfigFileError& e) {
      const std::string m = e.what();
      QVERIFY2(m.find("name must be a string (got a list of 1 item(s))") != std::string::npos ||
                   m.find("not valid JSON") != std::string::npos,
               m.substr(0, 300).c_str());
      QVERIFY(m.find(path) != std::string::npos);
    }
  }

  void versionOneFilesLoadAsVersionTwo() {
    QTemporaryDir dir;
    const std::string v1 = (dir.path() + "/v1.json").toStdString();
    std::ofstream(v1) << R"({"schema_version": 1, "name": "old", "data": {"dataset": "mnist"}})";
    const TrainConfig c = loadConfigFile(v1);
    QCOMPARE(c.schema_version, 2);
    QCOMPARE(c.data.format.name(), std::string("idx"));
    QCOMPARE(c.data.dataset.name(), std::string("mnist"));
    QVERIFY(validate(c).empty());
  }

  void newerFilesSayTheyAreNewer() {
    QTemporaryDir dir;
    const std::string v99 = (dir.path() + "/v99.json").toStdString();
    std::ofstream(v99) << R"({"schema_version": 99})";
    try {
      loadConfigFile(v99);
      QFAIL("expected an error");
    } catch (const ConfigFileError& e) {
      QVERIFY2(std::string(e.what()).find(v99) != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("written by a newer Training Studio") != std::string::npos, e.what());
    }
  }

  // CUDA graphs need a CUDA GPU: "on" with the CPU named is refused before
  // anything starts; auto and off pass.
  // distributed.devices: one process per entry, GPU indices or cpu.
  void processDevicesAreChecked() {
    QCOMPARE(processDevices(""), std::vector<std::string>{});
    QCOMPARE(processDevices(" 0, 1 ,3"), (std::vector<std::string>{"0", "1", "3"}));
    for (const char* good : {"", "0,1", "cpu,cpu", "2"}) {
      TrainConfig c;
      c.distributed.devices = good;
      QVERIFY2(validate(c).empty(), all(validate(c)).c_str());
    }
    for (const auto& [bad, part] :
         std::vector<std::pair<std::string, std::string>>{{"0,0", "GPU indices once each"},
                                                          {"gpu0,gpu1", "GPU indices once each"},
                                                          {"0,,1", "GPU indices once each"},
                                                          {"cpu,1", "both GPUs and cpu"}}) {
      TrainConfig c;
      c.distributed.devices = bad;
      QVERIFY2(hasError(validate(c), "distributed.devices", part), (bad + ": " + all(validate(c))).c_str());
    }
    TrainConfig c;
    c.distributed.batchnorm.setName("global");
    QVERIFY(hasError(validate(c), "distributed.batchnorm", "must be one of"));
    c.distributed.batchnorm = BatchNormSync::sync;
    c.model.kind = "torchscript";
    c.model.path = "net.ts";
    QVERIFY(hasError(validate(c), "distributed.batchnorm", "built-in models"));
  }

  void cudaGraphsOnNeedsAGpu() {
    TrainConfig c;
    c.performance.device = "cpu";
    c.performance.cuda_graphs = CudaGraphs::on;
    QVERIFY(hasError(validate(c), "performance.cuda_graphs", "CUDA graphs need a CUDA GPU"));
    c.performance.cuda_graphs = CudaGraphs::auto_;
    QVERIFY(validate(c).empty());
    c.performance.cuda_graphs.setName("sometimes");
    QVERIFY(hasError(validate(c), "performance.cuda_graphs", "(got \"sometimes\")"));
  }

  void scheduleFieldsAreCheckedForTheChosenKind() {
    TrainConfig c;
    c.schedule.kind = ScheduleKind::onecycle;
    c.schedule.onecycle.pct_start = 1.5;
    c.schedule.onecycle.anneal.setName("cubic");
    c.schedule.warmup_steps = 10;
    auto errors = validate(c);
    QVERIFY(hasError(errors, "schedule.onecycle.pct_start", "(got 1.5)"));
    QVERIFY(hasError(errors, "schedule.onecycle.anneal", "(got \"cubic\")"));
    QVERIFY(hasError(errors, "schedule.warmup_steps", "warms up by itself"));
    c = TrainConfig{};
    c.schedule.kind = ScheduleKind::cyclic;
    c.schedule.cyclic.mode.setName("sine");
    c.schedule.cyclic.step_size_up = 0;
    errors = validate(c);
    QVERIFY(hasError(errors, "schedule.cyclic.mode", "(got \"sine\")"));
    QVERIFY(hasError(errors, "schedule.cyclic.step_size_up", "(got 0)"));
  }

  void everyErrorIsReportedAtOnce() {
    TrainConfig c;
    c.optimizer.lr = -1;
    c.train.batch_size = 0;
    c.model.kind = "x";
    const auto errors = validate(c);
    QCOMPARE(errors.size(), size_t(3));
  }

  void jsonRoundTrips() {
    TrainConfig c;
    c.name = "round-trip";
    c.model.kind = "resnet";
    c.model.width = 17;
    c.optimizer.kind = OptimizerKind::adamw;
    c.optimizer.beta2 = 0.95;
    c.schedule.kind = ScheduleKind::cyclic;
    c.schedule.cyclic.mode = CyclicMode::exp_range;
    c.schedule.cyclic.gamma = 0.99;
    c.precision.mode = PrecisionMode::bf16;
    c.train.seed = 123456789012345ULL;
    c.data.augment_crop = 2;
    c.data.format = DataFormat::csv;
    c.data.ignore_columns = {"id", "comment"};
    c.data.image_size = {32, 48};
    c.model.path = "/models/net.ts";
    c.loader.mode = LoaderMode::workers;
    std::vector<ConfigError> errors;
    const nlohmann::json j = toJson(c);
    TrainConfig back = configFromJson(j, errors);
    QVERIFY2(errors.empty(), all(errors).c_str());
    QCOMPARE(toJson(back).dump(), j.dump());
    QCOMPARE(back.train.seed, c.train.seed);
    QCOMPARE(back.schedule.cyclic.gamma, 0.99);
  }

  void unknownKeysAreRejected() {
    std::vector<ConfigError> errors;
    nlohmann::json j = toJson(TrainConfig{});
    j["optimizer"]["learning_rate"] = 0.1;
    j["colour"] = "red";
    j["schedule"]["onecycle"]["warmup"] = 3;
    configFromJson(j, errors);
    QVERIFY(hasError(errors, "optimizer.learning_rate", "is not a known setting"));
    QVERIFY(hasError(errors, "colour", "is not a known setting"));
    QVERIFY(hasError(errors, "schedule.onecycle.warmup", "is not a known setting"));
  }

  void wrongTypesAreRejected() {
    std::vector<ConfigError> errors;
    nlohmann::json j = nlohmann::json::object();
    j["train"] = {{"batch_size", "big"}, {"epochs", 2.5}};
    j["optimizer"] = {{"nesterov", 1}};
    j["model"] = 3;
    configFromJson(j, errors);
    QVERIFY(hasError(errors, "train.batch_size", "must be a whole number (got \"big\")"));
    QVERIFY(hasError(errors, "train.epochs", "must be a whole number (got 2.5)"));
    QVERIFY(hasError(errors, "optimizer.nesterov", "must be true or false (got 1)"));
    QVERIFY(hasError(errors, "model", "must be an object (got 3)"));
  }

  void missingKeysKeepDefaults() {
    std::vector<ConfigError> errors;
    TrainConfig c = configFromJson(nlohmann::json::parse(R"({"optimizer": {"lr": 0.3}})"), errors);
    QVERIFY(errors.empty());
    QCOMPARE(c.optimizer.lr, 0.3);
    QCOMPARE(c.train.batch_size, TrainConfig{}.train.batch_size);
  }

  void overridesAreChecked() {
    TrainConfig c;
    applyOverride(c, "schedule.onecycle.max_lr=0.4");
    QCOMPARE(c.schedule.onecycle.max_lr, 0.4);
    applyOverride(c, "name=plain-text");  // not JSON: taken as a string
    QCOMPARE(c.name, std::string("plain-text"));
    QVERIFY_THROWS_EXCEPTION(ConfigFileError, applyOverride(c, "optimizer.lrr=1"));
    QVERIFY_THROWS_EXCEPTION(ConfigFileError, applyOverride(c, "optimizer=1"));
    QVERIFY_THROWS_EXCEPTION(ConfigFileError, applyOverride(c, "train.batch_size=abc"));
    QVERIFY_THROWS_EXCEPTION(ConfigFileError, applyOverride(c, "no-equals-sign"));
  }

  void filesReportTheirName() {
    QTemporaryDir dir;
    const std::string bad = (dir.path() + "/bad.json").toStdString();
    { std::ofstream(bad) << "{ \"optimizer\": { \"lr\": "; }
    try {
      loadConfigFile(bad);
      QFAIL("expected an error");
    } catch (const ConfigFileError& e) {
      QVERIFY2(std::string(e.what()).find(bad) != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("not valid JSON") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(ConfigFileError, loadConfigFile((dir.path() + "/missing.json").toStdString()));
    const std::string good = (dir.path() + "/good.json").toStdString();
    TrainConfig c;
    c.optimizer.lr = 0.123;
    saveConfigFile(c, good);
    QCOMPARE(loadConfigFile(good).optimizer.lr, 0.123);
  }

  void presetsLoadAndValidate() {
    const std::string dir = defaultPresetDir();
    const auto names = presetNames(dir);
    QVERIFY(std::find(names.begin(), names.end(), "fashion-mnist-cnn") != names.end());
    QVERIFY(std::find(names.begin(), names.end(), "fashion-mnist-mlp") != names.end());
    for (const auto& n : names) {
      TrainConfig c = loadConfigFile(presetPath(dir, n));
      QVERIFY2(validate(c).empty(), (n + ": " + all(validate(c))).c_str());
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, presetPath(dir, "no-such-preset"));
  }

  // Issue 29, item 1: a setting that the others override says so, naming
  // the one that acts: optimizer.lr under OneCycle and cyclic, momentum
  // while the schedule cycles it. The window, the fork dialog and the CLI's
  // --set all read this.
  void settingsWithoutEffectNameWhatActs() {
    TrainConfig c;
    c.optimizer.kind = OptimizerKind::sgd;
    c.schedule.kind = ScheduleKind::cosine;
    QVERIFY(settingsWithoutEffect(c).empty());
    c.schedule.kind = ScheduleKind::onecycle;
    QVERIFY(settingEffectNote("optimizer.lr", c).find("schedule.onecycle.max_lr") != std::string::npos);
    QVERIFY(settingEffectNote("optimizer.momentum", c).find("schedule.onecycle.base_momentum") != std::string::npos);
    c.schedule.onecycle.cycle_momentum = false;
    QCOMPARE(settingEffectNote("optimizer.momentum", c), std::string());
    QCOMPARE(learningRateSetting(c), std::string("schedule.onecycle.max_lr"));
    c.schedule.kind = ScheduleKind::cyclic;
    const auto notes = settingsWithoutEffect(c, {"optimizer.lr", "train.epochs"});
    QCOMPARE(notes.size(), size_t(1));
    QCOMPARE(notes.front().field, std::string("optimizer.lr"));
    QVERIFY(notes.front().message.find("schedule.cyclic.max_lr") != std::string::npos);
    // --set's assignments name their settings as well.
    QCOMPARE(settingsWithoutEffect(c, {"optimizer.lr=0.5", "train.epochs=3"}).size(), size_t(1));
    c.optimizer.kind = OptimizerKind::adam;  // momentum does not apply to Adam: nothing to say of it
    QCOMPARE(settingEffectNote("optimizer.momentum", c), std::string());
    QVERIFY(validate(c).empty());  // notes, never errors
  }

  // A setting set where nothing reads it is said by name, with where it is
  // read (model.weights on an mlp, a threshold on a classifier, an image
  // augmentation in detection); at its default it is not. An image
  // augmentation on a table is an error instead (one verdict, not two).
  void settingsSetWhereTheyDoNotApplySaySo() {
    TrainConfig c;
    c.model.kind = "mlp";
    c.data.format = DataFormat::csv;
    QVERIFY(settingsWithoutEffect(c).empty());
    c.model.weights = "/weights/resnet18.pth";
    c.task.threshold = 0.3;
    c.data.augment_vflip = true;
    c.data.augment_brightness = 0.4;
    QVERIFY2(settingEffectNote("model.weights", c)
                     .rfind("has no effect: it is read only with a torchvision model.kind", 0) == 0,
             settingEffectNote("model.weights", c).c_str());
    QCOMPARE(settingEffectNote("task.threshold", c),
             std::string("has no effect: it is read only with task.kind multilabel"));
    QCOMPARE(settingEffectNote("data.augment_vflip", c), std::string());  // refused by validate() instead
    std::vector<std::string> fields;
    for (const auto& n : settingsWithoutEffect(c)) fields.push_back(n.field);
    std::sort(fields.begin(), fields.end());
    QCOMPARE(fields, (std::vector<std::string>{"model.weights", "task.threshold"}));
    TrainConfig boxes;
    boxes.task.kind = TaskKind::detection;
    boxes.data.augment_vflip = true;
    QCOMPARE(settingEffectNote("data.augment_vflip", boxes),
             std::string("has no effect: it is read only with images (data.format idx or image_folder), task.kind "
                         "not detection, segmentation or instance_segmentation"));
    QCOMPARE(settingsWithoutEffect(c, {"task.threshold=0.3"}).size(), size_t(1));
    // Where they apply, they act: nothing to say.
    c.model.kind = "resnet18";
    c.task.kind = TaskKind::multilabel;
    QCOMPARE(settingEffectNote("model.weights", c), std::string());
    QCOMPARE(settingEffectNote("task.threshold", c), std::string());
    // A detector sizes and normalises its images itself; its box
    // augmentations are read only in detection.
    TrainConfig d;
    d.task.kind = TaskKind::detection;
    d.model.kind = "fasterrcnn_mobilenet_v3_large_320_fpn";
    d.data.format = DataFormat::image_folder;
    d.data.image_size = {64, 64};
    d.data.normalize = false;
    QCOMPARE(settingEffectNote("data.image_size", d),
             std::string("has no effect: it is read only with data.format image_folder, task.kind not detection, "
                         "segmentation or instance_segmentation"));
    QVERIFY2(
        settingEffectNote("data.normalize", d).rfind("has no effect under task.kind detection: the detector", 0) == 0,
        settingEffectNote("data.normalize", d).c_str());
    TrainConfig k;
    k.data.augment_zoom_out = true;
    k.model.detector.min_size = 512;
    QCOMPARE(settingEffectNote("data.augment_zoom_out", k),
             std::string("has no effect: it is read only with task.kind detection or instance_segmentation"));
    QVERIFY2(
        settingEffectNote("model.detector.min_size", k).rfind("has no effect: it is read only with a detector", 0) == 0,
        settingEffectNote("model.detector.min_size", k).c_str());
    // A segmenter sizes its images by model.segmenter.*, normalises them with
    // ImageNet's statistics and reads its masks' settings only in segmentation.
    TrainConfig s;
    s.task.kind = TaskKind::segmentation;
    s.model.kind = "lraspp_mobilenet_v3_large";
    s.data.format = DataFormat::image_folder;
    s.data.image_size = {64, 64};
    s.data.normalize_stats = NormalizeStats::data;
    s.data.augment_resized_crop = true;
    s.model.segmenter.aux_loss = true;
    QCOMPARE(settingEffectNote("data.image_size", s),
             std::string("has no effect: it is read only with data.format image_folder, task.kind not detection, "
                         "segmentation or instance_segmentation"));
    QVERIFY2(
        settingEffectNote("data.normalize_stats", s).find("a segmenter's images take ImageNet's") != std::string::npos,
        settingEffectNote("data.normalize_stats", s).c_str());
    QVERIFY(!settingEffectNote("data.augment_resized_crop", s).empty());
    QVERIFY2(settingEffectNote("model.segmenter.aux_loss", s).find("with an auxiliary head") != std::string::npos,
             settingEffectNote("model.segmenter.aux_loss", s).c_str());
    TrainConfig notSegmenting;
    notSegmenting.data.ignore_index = 0;
    notSegmenting.model.segmenter.base_size = 64;
    QCOMPARE(settingEffectNote("data.ignore_index", notSegmenting),
             std::string("has no effect: it is read only with task.kind segmentation"));
    QVERIFY(settingEffectNote("model.segmenter.base_size", notSegmenting)
                .rfind("has no effect: it is read only with a segmentation model.kind", 0) == 0);
  }

  // Issue 29, item 11: a run is named by what it trains.
  void runNamesSayWhatTheyTrain() {
    TrainConfig c;
    c.data.format = DataFormat::idx;
    c.data.dataset = IdxDataset::fashion_mnist;
    c.model.kind = "cnn";
    QCOMPARE(suggestedRunName(c), std::string("fashion-mnist-cnn"));
    c.data.format = DataFormat::image_folder;
    c.data.root = "/data/digits png/";
    QCOMPARE(suggestedRunName(c), std::string("digits-png-cnn"));
    c.data.format = DataFormat::csv;
    c.data.root = "/data/breast-cancer.csv";
    c.model.kind = "torchscript";
    c.model.path = "/models/net.ts";
    QCOMPARE(suggestedRunName(c), std::string("breast-cancer-net"));
    c.data.root = "/data/" + std::string(150, 'x') + ".csv";
    c.name = suggestedRunName(c);
    QVERIFY(c.name.size() <= 100);
    QVERIFY(validate(c).empty() || validate(c).front().field != "name");
  }
};

QTEST_GUILESS_MAIN(TestTrainConfig)
#include "test_train_config.moc"
