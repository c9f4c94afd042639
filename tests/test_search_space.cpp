// A search's space and checks (studio/search_space.h), the C++ side of
// `training-studio-cli search` and the window's Search dialog: every range
// reads back as it was written, every mistake is refused with the key and
// what is wrong before anything runs, and a searched setting that the other
// settings override is said. tests/test_search.py runs the search itself.
#include <QtTest/QtTest>

#include <map>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/metric_record.h"
#include "studio/search_space.h"
#include "studio/settings_schema.h"

using namespace studio;

namespace {

// The message of the ConfigFileError f throws ("" when it throws none).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

SearchSpec spec(std::vector<std::string> space) {
  SearchSpec s;
  s.name = "study";
  s.base.schedule.kind = ScheduleKind::cosine;
  for (const auto& t : space) s.space.push_back(parseSearchParam(t));
  return s;
}

}  // namespace

class TestSearchSpace : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void rangesReadBack() {
    const SearchParam lr = parseSearchParam("optimizer.lr=float:1e-4:0.1:log");
    QCOMPARE(lr.kind, SearchParam::Kind::Float);
    QCOMPARE(lr.low, 1e-4);
    QCOMPARE(lr.high, 0.1);
    QVERIFY(lr.log);
    QCOMPARE(searchParamText(lr), std::string("optimizer.lr=float:1e-04:0.1:log"));  // shortest round trip
    QCOMPARE(searchParamText(parseSearchParam(searchParamText(lr))), searchParamText(lr));
    const SearchParam batch = parseSearchParam("train.batch_size=int:24:256:pow2");
    QCOMPARE(batch.choices, (std::vector<std::string>{"32", "64", "128", "256"}));
    QCOMPARE(batch.gridValues(), batch.choices);
    const SearchParam depth = parseSearchParam("model.depth=int:1:3");
    QCOMPARE(depth.gridValues(), (std::vector<std::string>{"1", "2", "3"}));
    QVERIFY(parseSearchParam("optimizer.lr=float:0.01:0.1").gridValues().empty());
    const SearchParam kind = parseSearchParam("optimizer.kind= choice: sgd, adamw");
    QCOMPARE(kind.choices, (std::vector<std::string>{"sgd", "adamw"}));
    QCOMPARE(kind.describe(), std::string("sgd, adamw"));
  }

  void mistakesAreNamed() {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"optimizer.learning_rate=float:0.1:1", "optimizer.learning_rate is not a setting"},
        {"optimizer.lr", "give key=float:LOW:HIGH"},
        {"optimizer.lr=float:0.1:0.01", "the low bound 0.1 is not below the high bound 0.01"},
        {"optimizer.lr=float:0.1:0.1", "the low bound 0.1 is not below the high bound 0.1"},
        {"optimizer.weight_decay=float:0:0.1:log", "a log range needs bounds above 0 (low is 0)"},
        {"optimizer.lr=float:a:1", "\"a\" is not a number"},
        {"optimizer.lr=float:0.1:1:pow2", "\"pow2\" is not log"},
        {"optimizer.lr=real:0.1:1", "the kind \"real\" is not float, int or choice"},
        {"train.batch_size=float:8:64", "train.batch_size is not a real number; use int:"},
        {"optimizer.lr=int:1:3", "optimizer.lr is not a whole number"},
        {"train.batch_size=int:8.5:64", "int bounds must be whole numbers"},
        {"train.batch_size=int:1:99999999999999999999",
         "the bounds 1 and 99999999999999999999 must lie within ±9007199254740992"},
        {"train.batch_size=int:100:120:pow2", "fewer than two powers of two lie between 100 and 120"},
        {"optimizer.kind=choice:sgd", "a choice needs two values or more"},
        {"optimizer.kind=choice:sgd,sgd", "the choice sgd is given twice"},
        {"name=choice:a,b", "name is not searched: a search samples numbers, choices and switches"},
        {"output.dir=choice:a,b", "output.dir is not searched"},
        {"data.image_size=choice:32x32,64x64", "data.image_size is not searched"},
    };
    for (const auto& c : cases) {
      const std::string& text = c.first;
      const std::string& message = c.second;
      const std::string got = refusal([&] { parseSearchParam(text); });
      QVERIFY2(got.find(message) != std::string::npos, (text + " -> " + got).c_str());
      QVERIFY2(got.find("--space") != std::string::npos, got.c_str());
    }
  }

  void theWholeSearchIsChecked() {
    SearchSpec good = spec({"optimizer.lr=float:1e-4:0.1:log", "optimizer.kind=choice:sgd,adamw"});
    checkSearch(good);
    QCOMPARE(good.direction, std::string("maximize"));
    SearchSpec loss = spec({"optimizer.lr=float:1e-4:0.1:log"});
    loss.metric = "eval_loss";
    checkSearch(loss);
    QCOMPARE(loss.direction, std::string("minimize"));
    // Issue 57: an error is minimised like a loss (eval_rmse, eval_mae and
    // eval_ece were maximised: only ids with "loss" were minimised), as
    // early stopping minimises them; every evaluation figure has a direction.
    const std::map<std::string, std::pair<TaskKind, const char*>> want{
        {"eval_rmse", {TaskKind::regression, "minimize"}},        {"eval_mae", {TaskKind::regression, "minimize"}},
        {"eval_r2", {TaskKind::regression, "maximize"}},          {"eval_ece", {TaskKind::classification, "minimize"}},
        {"eval_auc", {TaskKind::classification, "maximize"}},     {"eval_map", {TaskKind::multilabel, "maximize"}},
        {"eval_f1", {TaskKind::multilabel, "maximize"}},          {"eval_map50", {TaskKind::detection, "maximize"}},
        {"eval_accuracy", {TaskKind::classification, "maximize"}}};
    for (const auto& [metric, taskAndDirection] : want) {
      SearchSpec s = spec({"optimizer.lr=float:1e-4:0.1:log"});
      s.metric = metric;
      s.base.task.kind = taskAndDirection.first;
      if (taskAndDirection.first == TaskKind::multilabel || taskAndDirection.first == TaskKind::regression) {
        s.base.data.format = DataFormat::csv;
        s.base.model.kind = "mlp";
      }
      if (taskAndDirection.first == TaskKind::detection) {
        s.base.model.kind = "fasterrcnn_mobilenet_v3_large_320_fpn";
        s.base.data.format = DataFormat::image_folder;
        s.base.data.annotations = "/tmp/instances.json";
      }
      const std::string why = refusal([&] { checkSearch(s); });
      QVERIFY2(why.empty(), (metric + ": " + why).c_str());
      QVERIFY2(s.direction == taskAndDirection.second, (metric + ": " + s.direction).c_str());
    }
    for (const auto& m : searchMetrics()) QVERIFY2(!metricDirection(m).empty(), m.c_str());

    SearchSpec bad =
        spec({"optimizer.kind=choice:sgd,nope", "optimizer.lr=float:1e-4:0.1:log", "optimizer.momentum=float:0.5:1.5"});
    bad.metric = "test_f1";
    bad.parallel = 0;
    bad.trials = 0;
    bad.sampler = "grid";
    bad.pruner = "asha";
    bad.enqueued = {"optimizer.lr=0.01 train.epochs=3"};
    const std::string got = refusal([&] { checkSearch(bad); });
    for (const char* m :
         {"the value nope is not valid: optimizer.kind", "the value 1.5 is not valid: optimizer.momentum",
          "optimizer.lr=float:1e-04:0.1:log: the grid sampler needs values",
          "--metric test_f1 is not what a run's evaluations record", "--parallel 0: give 1 or more",
          "--trials 0: give 1 or more", "--pruner asha is not",
          "train.epochs=3 is not key=value of a "
          "--space setting"})
      QVERIFY2(got.find(m) != std::string::npos, (std::string(m) + " not in: " + got).c_str());

    SearchSpec ema = spec({"optimizer.lr=float:1e-4:0.1:log"});
    ema.metric = "ema_eval_accuracy";
    QVERIFY(refusal([&] { checkSearch(ema); }).find("set train.ema.decay") != std::string::npos);
    ema.base.train.ema.decay = 0.99;
    checkSearch(ema);

    SearchSpec dup = spec({"optimizer.lr=float:1e-4:0.1:log", "optimizer.lr=float:1e-3:0.1"});
    QVERIFY(refusal([&] { checkSearch(dup); }).find("optimizer.lr is given twice") != std::string::npos);
    // Issue 59, item 15: a 10 kB --name was echoed whole.
    SearchSpec longName = spec({"optimizer.lr=float:1e-4:0.1:log"});
    longName.name = std::string(10000, 'n');
    const std::string nameSaid = refusal([&] { checkSearch(longName); });
    QVERIFY2(nameSaid.find("--name \"" + std::string(40, 'n') + "\"... (10000 characters): a study's name is 1-90") !=
                 std::string::npos,
             nameSaid.c_str());
    QVERIFY2(nameSaid.size() < 400, nameSaid.c_str());
    SearchSpec none = spec({});
    QVERIFY(refusal([&] { checkSearch(none); }).find("give at least one setting") != std::string::npos);
    SearchSpec trialSet = spec({"optimizer.lr=float:1e-4:0.1:log"});
    trialSet.trialSettings = {"train.epochs=0"};
    QVERIFY(refusal([&] { checkSearch(trialSet); }).find("--trial-set: train.epochs") != std::string::npos);
  }

  // Issue 59, item 1: a password in any form of the storage URL is refused
  // before anything is written, and no message repeats it.
  void aStorageUrlHoldsNoPassword() {
    checkStorageUrl("postgresql://studio@db.example:5432/study");
    checkStorageUrl("postgresql://studio@db.example/study?sslmode=require&connect_timeout=5");
    checkStorageUrl("mysql://studio@db.example/study");
    const char* secret = "S3cr-et";
    for (const std::string& url : {std::string("postgresql://studio:") + secret + "@db/study",
                                   std::string("postgresql://studio@db/study?password=") + secret,
                                   std::string("postgresql://studio@db/study?sslmode=require&PassWord=") + secret,
                                   std::string("postgresql://studio@db/study?pass%77ord=") + secret,
                                   std::string("postgresql://studio@db/study?sslpassword=") + secret,
                                   std::string("postgresql://studio@db/study?passfile=/tmp/") + secret,
                                   std::string("mysql://studio@db/study?password=") + secret,
                                   std::string("postgres://studio:") + secret + "@db/study"}) {
      SearchSpec s = spec({"optimizer.lr=float:1e-4:0.1:log"});
      s.storage = url;
      const std::string got = refusal([&] { checkSearch(s); });
      QVERIFY2(!got.empty(), url.c_str());
      QVERIFY2(got.find(secret) == std::string::npos, got.c_str());
      QVERIFY2(got.find("***") != std::string::npos, got.c_str());
      QVERIFY2(redactedStorageUrl(url).find(secret) == std::string::npos, redactedStorageUrl(url).c_str());
    }
    QVERIFY(refusal([&] { checkStorageUrl("postgresql://studio@db/study?passfile=/x"); }).find("PGPASSFILE") !=
            std::string::npos);
    QCOMPARE(redactedStorageUrl("postgresql://u@h/db?sslmode=require"),
             std::string("postgresql://u@h/db?sslmode=require"));
  }

  void aSettingWithoutEffectIsSaid() {
    SearchSpec s = spec({"optimizer.lr=float:1e-4:0.1:log", "model.width=int:16:64"});
    s.base.schedule.kind = ScheduleKind::onecycle;
    const auto notes = searchWarnings(s);
    QCOMPARE(notes.size(), size_t(1));
    QVERIFY2(notes[0].rfind("--space optimizer.lr has no effect under schedule.kind onecycle", 0) == 0,
             notes[0].c_str());
    QVERIFY(notes[0].find("schedule.onecycle.max_lr") != std::string::npos);
    s.base.schedule.kind = ScheduleKind::cosine;
    QVERIFY(searchWarnings(s).empty());
  }

  void theSpecReadsBack() {
    SearchSpec s = spec({"optimizer.lr=float:1e-4:0.1:log", "train.batch_size=int:32:128:pow2",
                         "optimizer.nesterov=choice:true,false"});
    s.trialSettings = {"train.epochs=1"};
    s.enqueued = {"optimizer.lr=0.01"};
    s.sampler = "random";
    s.seed = 5;
    checkSearch(s);
    const nlohmann::json j = searchSpecJson(s);
    // Typed as the settings are, for Optuna's distributions.
    QVERIFY2(j["space"][1]["choices"] == nlohmann::json::parse("[32, 64, 128]"), j["space"].dump().c_str());
    QCOMPARE(j["space"][2]["choices"], nlohmann::json::parse("[true, false]"));
    // The grid sampler's values, for the runner (none for a float range).
    QVERIFY(!j["space"][0].contains("grid"));
    QVERIFY(j["space"][1]["grid"] == nlohmann::json::parse("[32, 64, 128]"));
    QVERIFY(j["space"][2]["grid"] == nlohmann::json::parse("[true, false]"));
    QCOMPARE(j["metrics_header"].get<std::string>(), metricsCsvHeader());
    const SearchSpec back = searchSpecFromJson(j, "search.json");
    QCOMPARE(searchSpecJson(back), j);
    QCOMPARE(trialConfig(back, {"optimizer.lr=0.02"}).optimizer.lr, 0.02);
    QCOMPARE(trialConfig(back, {}).train.epochs, 1);
    QCOMPARE(QString::fromStdString(searchFolder(back)), QString("runs/search-study"));
    const std::string got = refusal([&] { searchSpecFromJson(nlohmann::json::object(), "x/search.json"); });
    QVERIFY2(got.find("x/search.json is not a study's search.json") != std::string::npos, got.c_str());
    // A key taken out by hand is named in words, not as nlohmann's exception code.
    nlohmann::json tampered = j;
    tampered.erase("metric");
    const std::string named = refusal([&] { searchSpecFromJson(tampered, "x/search.json"); });
    QVERIFY2(
        named.find("key 'metric' not found") != std::string::npos && named.find("json.exception") == std::string::npos,
        named.c_str());
  }
};

QTEST_APPLESS_MAIN(TestSearchSpace)
#include "test_search_space.moc"
