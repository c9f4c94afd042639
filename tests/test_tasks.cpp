// The tasks' losses (loss.kind) and their gradients equal
// torch.nn.functional's on the same outputs and targets (oracle:
// tests/reference/make_references.py, tasks.json, with the installed torch);
// a task's settings are checked (a loss that does not fit the task, a
// regression figure for early stopping, target columns without a
// regression), and a regression's evaluation report reads back as written.
#include "test_support.h"
#include "torch_test_support.h"

#include <nlohmann/json.hpp>

#include "data/batch_loader.h"
#include "studio/class_weights.h"
#include "studio/eval_report.h"
#include "studio/settings_schema.h"
#include "train/tasks/task.h"

using namespace studio;
using studio::test::tensorOf;

namespace {

bool hasError(const std::vector<ConfigError>& errors, const std::string& field, const std::string& words) {
  for (const auto& e : errors)
    if (e.field == field && e.message.find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestTasks : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void lossesMatchPyTorch_data() {
    QTest::addColumn<int>("index");
    const auto ref = test::loadReference("tasks");
    for (size_t i = 0; i < ref["cases"].size(); ++i) {
      const auto& c = ref["cases"][i];
      std::string name = c["loss"].get<std::string>();
      for (const char* k : {"class_weights", "label_smoothing", "focal_gamma", "pos_weight"})
        if (c.contains(k)) name += std::string(" ") + k + " " + c[k].dump();
      QTest::newRow(name.c_str()) << static_cast<int>(i);
    }
  }
  void lossesMatchPyTorch() {
    QFETCH(int, index);
    const auto ref = test::loadReference("tasks");
    const auto& c = ref["cases"][static_cast<size_t>(index)];
    const auto shape = ref["shape"].get<std::vector<int64_t>>();
    TrainConfig cfg;
    cfg.loss.kind.setName(c["loss"].get<std::string>());
    cfg.task.kind = cfg.loss.kind == LossKind::cross_entropy || cfg.loss.kind == LossKind::focal
                        ? TaskKind::classification
                    : cfg.loss.kind == LossKind::bce ? TaskKind::multilabel
                                                     : TaskKind::regression;
    cfg.loss.huber_delta = c["delta"].get<double>();
    cfg.loss.class_weights = c.value("class_weights", std::string("none"));
    cfg.loss.label_smoothing = c.value("label_smoothing", 0.0);
    cfg.loss.focal_gamma = c.value("focal_gamma", 2.0);
    cfg.loss.pos_weight = c.value("pos_weight", std::string("none"));
    for (const auto& e : validate(cfg)) QVERIFY2(e.field.rfind("loss.", 0) != 0, e.text().c_str());  // they fit
    TaskData data;  // the weights as the run computes them from its settings (loadData)
    data.weights = cfg.task.kind == TaskKind::multilabel
                       ? positiveWeights(cfg.loss.pos_weight, {5, 6, 5}, 16, {"a", "b", "c"})
                       : classWeights(cfg.loss.class_weights, {5, 6, 5}, {"a", "b", "c"});
    const auto task = makeTask(cfg, data);
    QCOMPARE(task->name(), cfg.task.kind.name());
    const torch::Tensor out = tensorOf(ref["output"], shape).requires_grad_(true);
    const torch::Tensor target = cfg.task.kind == TaskKind::classification
                                     ? torch::tensor(ref["labels"].get<std::vector<int64_t>>(), torch::kInt64)
                                     : tensorOf(ref[cfg.task.kind == TaskKind::multilabel ? "tags" : "target"], shape);
    const torch::Tensor loss = task->loss(out, target);
    QCOMPARE(loss.dim(), 0);
    QCOMPARE(loss.scalar_type(), torch::kFloat32);
    loss.backward();
    const double want = c["value"].get<double>();
    QVERIFY2(std::abs(loss.item<double>() - want) <= 1e-6 * std::max(1.0, std::abs(want)),
             (std::to_string(loss.item<double>()) + " vs " + std::to_string(want)).c_str());
    const torch::Tensor grad = tensorOf(c["grad"], shape);
    QVERIFY2(torch::allclose(out.grad(), grad, 1e-5, 1e-7), c["loss"].dump().c_str());
  }

  // "auto" is the task's usual loss: cross-entropy, or MSE.
  void autoLossIsTheTasksOwn() {
    const torch::Tensor out = torch::tensor({{1.0f, 2.0f}}), y = torch::tensor({{0.0f, 4.0f}});
    TrainConfig cfg;
    cfg.task.kind = TaskKind::regression;
    QCOMPARE(makeTask(cfg)->loss(out, y).item<double>(), 2.5);  // (1 + 4) / 2
  }

  void settingsThatDoNotFitTheTask() {
    TrainConfig c;
    c.loss.kind = LossKind::mse;
    QVERIFY(hasError(validate(c), "loss.kind", "does not fit task.kind classification"));
    c = TrainConfig{};
    c.task.kind = TaskKind::regression;  // the default data are IDX images
    QVERIFY(hasError(validate(c), "task.kind", "needs data.format csv"));
    c.data.format = DataFormat::csv;
    c.model.kind = "mlp";
    c.data.root = "/tmp/table.csv";
    c.loss.kind = LossKind::cross_entropy;
    QVERIFY(hasError(validate(c), "loss.kind", "cross_entropy does not fit task.kind regression"));
    c.loss.kind = LossKind::huber;
    c.loss.huber_delta = 0;
    QVERIFY(hasError(validate(c), "loss.huber_delta", "must be > 0"));
    c.loss.huber_delta = 1;
    c.train.early_stopping.metric = "eval_accuracy";
    QVERIFY(hasError(validate(c), "train.early_stopping.metric", "classification figure"));
    c.train.early_stopping.metric = "eval_r2";
    QVERIFY(validate(c).empty());
    c.task.kind = TaskKind::classification;
    c.loss.kind = LossKind::auto_;
    c.data.target_columns = {"price"};
    QVERIFY(hasError(validate(c), "train.early_stopping.metric", "regression figure"));
    // Target columns without a regression: a note where they are set, not an error.
    QVERIFY(!hasError(validate(c), "data.target_columns", ""));
    QVERIFY(settingEffectNote("data.target_columns", c).find("has no effect under task.kind classification") !=
            std::string::npos);
    c.task.kind = TaskKind::regression;
    QVERIFY(settingEffectNote("data.target_columns", c).empty());
  }

  void classWeightsSettings() {
    QCOMPARE(classWeightsProblem("balanced"), std::string());
    QCOMPARE(classWeightsProblem(" 1, 2.5 ,3"), std::string());
    QVERIFY(classWeightsProblem("1, -2").find("one positive number per class") != std::string::npos);
    QVERIFY(classWeightsProblem("heavy").find("(got \"heavy\")") != std::string::npos);
    // 1e300 is finite, but the float32 loss overflows with it: refused when read, not at step 1.
    QVERIFY(classWeightsProblem("1, 1e300").find("each at most 1000000") != std::string::npos);
    QCOMPARE(classWeightsProblem("1, 1000000"), std::string());
    QVERIFY(classWeightsProblem(std::string(100000, '7')).size() < 400);  // a long value is not echoed whole
    // The README's list form in a settings file: [1, 2.5, 3] reads as "1, 2.5, 3".
    std::vector<ConfigError> errors;
    const TrainConfig listed =
        configFromJson(nlohmann::json::parse(R"({"loss": {"class_weights": [1, 2.5, 3], "pos_weight": [4]}})"), errors);
    QVERIFY(errors.empty());
    QCOMPARE(listed.loss.class_weights, std::string("1, 2.5, 3"));
    QCOMPARE(listed.loss.pos_weight, std::string("4"));
    configFromJson(nlohmann::json::parse(R"({"loss": {"class_weights": [1, "heavy"]}})"), errors);
    QCOMPARE(errors.size(), size_t(1));
    QVERIFY2(errors[0].text().find("loss.class_weights must list numbers") != std::string::npos,
             errors[0].text().c_str());
    QCOMPARE(classWeights("1, 2.5, 3", {4, 5, 6}, {"a", "b", "c"}), (std::vector<double>{1, 2.5, 3}));
    QVERIFY(classWeights("none", {4, 5}, {"a", "b"}).empty());
    // The wrong length names both counts; a class without examples cannot be balanced.
    try {
      classWeights("1, 2", {4, 5, 6}, {"a", "b", "c"});
      QFAIL("no error");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("has 2 weight(s); the data has 3 classes (a, b, c)") != std::string::npos,
               e.what());
    }
    QVERIFY_THROWS_EXCEPTION(InputError, classWeights("balanced", {4, 0, 6}, {"a", "b", "c"}));
    TrainConfig c;
    c.loss.class_weights = "1;2";
    QVERIFY(hasError(validate(c), "loss.class_weights", "must be none, balanced"));
    c.loss.class_weights = "balanced";
    c.loss.kind = LossKind::focal;
    c.loss.label_smoothing = 0.1;
    QVERIFY(hasError(validate(c), "loss.label_smoothing", "applies to cross_entropy"));
  }

  // data.sampler balanced: every class about equally often in an epoch of
  // draws with replacement; the same draws for the same seed and epoch (a
  // resumed run's), others for the next epoch.
  void balancedSamplerDrawsClassesEquallyOften() {
    std::vector<int64_t> rows(1000), labels(1000);
    for (int64_t i = 0; i < 1000; ++i) {
      rows[static_cast<size_t>(i)] = i;
      labels[static_cast<size_t>(i)] = i < 900 ? 0 : 1;
    }
    auto set = std::make_shared<ExampleSet>(torch::zeros({1000, 2}), rows, labels);
    LoaderOptions o;
    o.batchSize = 1000;
    o.deviceResident = true;
    o.norm = Normalization::make(false, {0, 0}, {1, 1}, torch::kCPU);
    o.sampleWeights = torch::tensor(std::vector<double>(900, 1.0 / 900), torch::kFloat64);
    o.sampleWeights = torch::cat({o.sampleWeights, torch::full({100}, 1.0 / 100, torch::kFloat64)});
    BatchLoader loader(set, o, torch::kCPU);
    BatchLoader again(set, o, torch::kCPU);
    loader.startEpoch(0);
    again.startEpoch(0);
    Batch a, b, c;
    QVERIFY(loader.next(a) && again.next(b));
    QCOMPARE(a.size(), int64_t(1000));
    const auto minority = a.y.sum().item<int64_t>();
    // Binomial(1000, 0.5): 4 standard deviations (15.8 each) either side.
    QVERIFY2(minority > 437 && minority < 563, std::to_string(minority).c_str());
    QVERIFY(torch::equal(a.y, b.y));
    loader.startEpoch(1);
    QVERIFY(loader.next(c));
    QVERIFY(!torch::equal(c.y, a.y));
  }

  void regressionReportReadsBack() {
    EvalReport r;
    r.task = TaskKind::regression;
    r.step = 12;
    r.epoch = 3;
    r.split = "test";
    r.loss = 0.25;
    r.rmse = 1.5;
    r.mae = 1.25;
    r.r2 = 0.75;
    r.examples = 2;
    r.targets = {{"price", 1.5, 1.25, 0.75, 10, 2}};
    r.actual = {{9}, {11}};
    r.predicted = {{10}, {12.5}};
    const EvalReport back = evalReportFromJson(toJson(r), "step-12.json");
    QCOMPARE(back.task.name(), std::string("regression"));
    QCOMPARE(back.r2, 0.75);
    QCOMPARE(back.targets.size(), size_t(1));
    QCOMPARE(back.targets[0].name, std::string("price"));
    QCOMPARE(back.predicted[1][0], 12.5);
    QVERIFY(std::isnan(back.accuracy));
    nlohmann::json bad = toJson(r);
    bad["predicted"] = {{1, 2}, {3, 4}};  // two values for one target
    QVERIFY_THROWS_EXCEPTION(InputError, evalReportFromJson(bad, "step-12.json"));
  }
};

QTEST_GUILESS_MAIN(TestTasks)
#include "test_tasks.moc"
